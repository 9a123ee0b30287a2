"""Entry point: `python run.py method=gsw dataset=epbench200` (add -m for sweeps).

The same command as `memeval run ...` (cli/run.py), with the conf/ folder beside this file.
"""

from __future__ import annotations

import sys
from pathlib import Path

from memeval.cli.run import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], config_dir=Path(__file__).resolve().parent / "conf"))
