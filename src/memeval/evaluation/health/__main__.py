"""`python -m memeval.evaluation.health RUN_DIR...`: the same command as `memeval health` (cli/health.py)."""

from __future__ import annotations

import sys

from memeval.cli.health import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
