"""Audits of the health checks over saved runs (`memeval audit example-answers`, `support-calibration`).

Each module is an entry point of the `memeval.audits` group (pyproject.toml); nothing imports it.
"""
