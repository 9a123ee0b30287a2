"""`memeval cache export|import|stats ...` (model_access/cache_cli.py): move cached calls between machines."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    from model_access.cache_cli import main as cache

    return cache(argv)
