"""`python -m memeval.evaluation.bundle export|verify|import ...`: the same command as `memeval bundle`.

An entry point that nothing imports (tests/test_layering.py puts every `__main__` module on the
top layer), so it may call the command in cli/, above the harness.
"""

import sys

from memeval.cli.bundle.command import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m memeval.evaluation.bundle"))
