"""`memeval cache export|import|stats|check ...` (model_access/cache_cli.py): move cached calls between
machines, count them, and set aside entries that cannot be read (model_access/cache_check.py)."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    from memeval.model_access.cache_cli import main as cache

    return cache(argv)
