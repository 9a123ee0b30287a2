"""Where the checkout's own folders are: conf/ (Hydra's configs), requirements/, data/.

The package lives in src/memeval; the configs and locks it reads sit at the repository root,
two levels up. One definition, so no module counts parent folders of its own.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parents[1]
CONF = ROOT / "conf"
REQUIREMENTS = ROOT / "requirements"
