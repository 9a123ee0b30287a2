"""`python -m memeval COMMAND ...` is `memeval COMMAND ...`: the same argv, the same table (cli/commands.py).

The one module entry point, for an environment whose console scripts are not on PATH; there is no
other `python -m` form of a command. Nothing imports it (tests/test_layering.py: a `__main__`
module sits on the top layer).
"""

import sys

from memeval.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
