"""The cap audit's run-level summary (metrics.json, the table header), from predictions alone.

The harness records each context's audit while answering (harness/provenance.py); the score
stage, run by the runner and by `memeval rescore` alike, summarises it here.
"""

from __future__ import annotations

from statistics import mean
from typing import Any

SHINGLE = 10  # words per indexed shingle
STRIDE = 4  # shingles indexed every STRIDE words: any shared run of SHINGLE + STRIDE - 1 words hits
VERBATIM_WORDS = SHINGLE + STRIDE - 1


def summarize(predictions: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Run-level cap audit for meta and the table header; None when no prediction carries one."""
    audits = [p["cap_audit"] for p in predictions if isinstance(p.get("cap_audit"), dict)]
    if not audits:
        return None
    shares = [a["uncapped_share"] for a in audits if a.get("uncapped_share") is not None]
    beyond = [len(a["verbatim_beyond_units"]) for a in audits]
    return {"n": len(audits),
            "mean_uncapped_share": round(mean(shares), 4) if shares else None,
            "mean_uncapped_tokens": (round(mean(a["uncapped_tokens"] for a in audits
                                                if a.get("uncapped_tokens") is not None), 1)
                                     if shares else None),
            "contexts_with_units_beyond_reported": sum(1 for b in beyond if b),
            "mean_units_beyond_reported": round(mean(beyond), 3),
            "max_verbatim_units": max(len(a["verbatim_units"]) for a in audits)}


def describe(summary: dict[str, Any] | None) -> str | None:
    """One header line for every results table."""
    if not summary:
        return None
    share = summary["mean_uncapped_share"]
    share_text = (f"uncapped context share {share:.1%} (text the method cannot trace to units, "
                  f"mean {summary['mean_uncapped_tokens']} tokens)" if share is not None
                  else "uncapped context share not declared by the method")
    return (f"cap audit: {share_text}; {summary['contexts_with_units_beyond_reported']} of {summary['n']} "
            f"contexts hold verbatim text ({VERBATIM_WORDS}+ words) of units beyond those counted "
            f"against the cap (mean {summary['mean_units_beyond_reported']}); at most "
            f"{summary['max_verbatim_units']} units verbatim in one context")
