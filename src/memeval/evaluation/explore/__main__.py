"""`python -m memeval.evaluation.explore RUN_DIR... --out DIR`: the same command as `memeval explore`.

An entry point that nothing imports (tests/test_layering.py puts every `__main__` module on the
top layer), so it may call the command in cli/.
"""

import sys

from memeval.cli.explore import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], prog="python -m memeval.evaluation.explore"))
