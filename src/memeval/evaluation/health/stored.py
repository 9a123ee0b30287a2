"""The claims an index folder stores, for the support check: one per stored fact, memory,
summary line, frame slot or graph edge, with the units it came from where the method records it.

Each method reads its own index folder (its `index_claims`, beside `index_counters`); the layer
above (harness/health.py) hands the claims over as plain dicts in the index view's `claims`
(evaluation/ never imports methods/). A method that reads no layout gives no index claims: its
claims are still read where they reach a context.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LIMIT = 20_000  # claims read per corpus: the check stays a matter of seconds on any index


@dataclass(frozen=True)
class Claim:
    """One stored claim: its text, the units it came from (None: not recorded), and where it is
    stored (a short label for examples)."""

    text: str
    units: tuple[str, ...] | None
    where: str


def _claim(row: dict[str, Any]) -> Claim:
    units = row.get("units")
    return Claim(str(row.get("text") or ""), None if units is None else tuple(str(u) for u in units),
                 str(row.get("where") or ""))


def index_claims(index: dict[str, Any] | None, limit: int = LIMIT) -> dict[str, list[Claim] | None] | None:
    """Corpus id -> its stored claims (None: the method reads no layout, or its folder is not
    found), from the index view harness/health.py hands over; None when the view holds no claims
    (a method that extracts nothing: its index is the text)."""
    claims = (index or {}).get("claims")
    if claims is None:
        return None
    return {str(cid): None if rows is None else [_claim(r) for r in rows[:limit]] for cid, rows in claims.items()}
