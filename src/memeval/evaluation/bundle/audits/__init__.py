"""Audits that read bundled run folders (`memeval audit run-facts`).

Each module is an entry point of the `memeval.audits` group (pyproject.toml); nothing imports it.
"""
