"""`python -m memeval.evaluation.judge_check ...`: the same command as `memeval judge-check`.

An entry point that nothing imports (tests/test_layering.py puts every `__main__` module on the
top layer), so it may call the command in cli/, above the harness.
"""

import sys

from memeval.cli.judge_check import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m memeval.evaluation.judge_check"))
