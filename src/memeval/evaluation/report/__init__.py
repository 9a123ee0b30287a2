"""The comparison report: paper-shaped tables, paired differences and figures from run folders.

Reads run folders only (never a model, never the config tree), so it can be run anywhere the
folders are: `memeval report RUN_DIR... [--reference RUN_DIR] [--out DIR]`.
"""

from .build import ReportError, build_report

__all__ = ["ReportError", "build_report"]
