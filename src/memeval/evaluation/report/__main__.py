"""`python -m memeval.evaluation.report RUN_DIR...`: the report command (evaluation/report/command.py)."""

import sys

from .command import main

if __name__ == "__main__":
    sys.exit(main())
