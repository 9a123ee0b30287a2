"""GSW's audits: measurements of saved indexes and bundles, run as `memeval audit gsw-...`.

Each module is an entry point of the `memeval.audits` group (pyproject.toml); nothing imports it.
"""
