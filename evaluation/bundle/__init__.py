"""Result bundles: run folders, the model calls behind them, a manifest and the report, re-derivable
at zero cost (`python -m evaluation.bundle export|verify|import`; format in docs/RESULT_BUNDLES.md)."""

from .export import BundleError, export_bundle
from .verify import import_calls, verify_bundle

__all__ = ["BundleError", "export_bundle", "import_calls", "verify_bundle"]
