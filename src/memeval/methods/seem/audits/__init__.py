"""SEEM's audits: measurements of saved runs and bundles, run as `memeval audit seem-...`.

Each module is an entry point of the `memeval.audits` group (pyproject.toml); nothing imports it.
"""
