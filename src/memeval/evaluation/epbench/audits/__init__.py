"""EpBench scoring audits over saved runs, run as `memeval audit epbench-...`.

Each module is an entry point of the `memeval.audits` group (pyproject.toml); nothing imports it.
"""
