"""Index checks, from the counts each method makes of its own index (methods.base.IndexCounters,
handed in as plain dicts by the layer above: evaluation/ never reads a method's files).

`index` is {"extracts": bool, "folder": str | None, "corpora": {corpus_id: counters | None}}:
`extracts` false for a method whose index is the text itself (Vanilla, Embedding RAG); a
corpus whose counters are None had no readable index folder. Counts of several corpora add up.
"""

from __future__ import annotations

from typing import Any

from ..runs.health_file import Check
from .grading import check, not_measured, pct, share

SCOPE = "index"


def _sum(corpora: list[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {"units": 0, "empty": {}, "at_least": set(), "names": 0, "names_not_noun_phrase": 0,
                             "name_samples": [], "example_copies": 0, "copy_samples": [], "fusion": None,
                             "structured": None}
    for c in corpora:
        total["units"] += int(c.get("units", 0))
        for key, (n_empty, n_units) in (c.get("empty") or {}).items():
            e = total["empty"].setdefault(key, [0, 0])
            e[0], e[1] = e[0] + int(n_empty), e[1] + int(n_units)
        total["at_least"] |= set(c.get("at_least") or [])
        for key in ("names", "names_not_noun_phrase", "example_copies"):
            total[key] += int(c.get(key, 0))
        total["name_samples"] += list(c.get("name_samples") or [])
        total["copy_samples"] += list(c.get("copy_samples") or [])
        fusion = (c.get("extra") or {}).get("fusion")
        if fusion:
            f = total["fusion"] or {"judged": 0, "merged": 0, "contradicting": 0, "contradicting_reasons": []}
            for key in ("judged", "merged", "contradicting"):
                f[key] += int(fusion.get(key, 0))
            f["contradicting_reasons"] += list(fusion.get("contradicting_reasons") or [])
            total["fusion"] = f
        calls = (c.get("extra") or {}).get("structured_calls")
        if calls:
            sc = total["structured"] or {"chat_attempts": 0, "chat_failed": 0, "schema_invalid": 0, "failed_units": 0}
            for key in sc:
                sc[key] += int(calls.get(key, 0))
            total["structured"] = sc
    return total


def _structured_check(sc: dict[str, Any], th: dict[str, Any]) -> Check:
    """Structured (JSON) extraction calls a package made that failed or missed its own schema
    (`extra["structured_calls"]`: Graphiti, cognee), and the units whose ingestion failed."""
    bad = sc["chat_failed"] + sc["schema_invalid"]
    return check("structured_call_failures", SCOPE, share(bad, sc["chat_attempts"]), th["structured_failures"],
                 f"{bad} of {sc['chat_attempts']} structured extraction calls failed or missed the package's "
                 f"schema ({sc['chat_failed']} raised, {sc['schema_invalid']} invalid); "
                 f"{sc['failed_units']} units failed to ingest")


def _empty_check(t: dict[str, Any], th: dict[str, Any]) -> Check:
    parts, worst = [], 0.0
    for key, (n_empty, n_units) in sorted(t["empty"].items()):
        if key in t["at_least"] and not n_empty:
            parts.append(f"{key} not countable per unit (totals only)")
            continue
        parts.append(f"{'at least ' if key in t['at_least'] else ''}{pct(n_empty, n_units)} without {key}")
        worst = max(worst, share(n_empty, n_units) or 0.0)
    if not parts:
        return not_measured("units_empty", SCOPE, th["empty"], "the method counts no structure per unit")
    return check("units_empty", SCOPE, round(worst, 4), th["empty"], f"{t['units']} units: " + "; ".join(parts))


def index_checks(index: dict[str, Any] | None, th: dict[str, Any]) -> list[Check]:
    if index is None or not index.get("extracts"):
        return [Check("extraction", SCOPE, "ok", None, None, "nothing extracted: the index is the text itself")]
    corpora = index.get("corpora") or {}
    missing = sorted(cid for cid, c in corpora.items() if c is None)
    found = [c for c in corpora.values() if c is not None]
    if not found:
        return [Check("extraction", SCOPE, "warn", None, None,
                      f"index folder not readable ({index.get('folder')}): index not checked")]
    t = _sum(found)
    out = [] if not missing else [Check("extraction", SCOPE, "warn", None, None,
                                        f"no readable index for corpora {', '.join(missing)}")]
    out.append(_empty_check(t, th))
    if t["names"]:
        out.append(check("names_not_noun_phrase", SCOPE, share(t["names_not_noun_phrase"], t["names"]),
                         th["not_noun_phrase"], f"{pct(t['names_not_noun_phrase'], t['names'])} extracted names "
                         "are pronouns or clauses (a lower bound)" +
                         (f", e.g. {'; '.join(t['name_samples'][:3])}" if t["name_samples"] else "")))
    else:
        out.append(not_measured("names_not_noun_phrase", SCOPE, th["not_noun_phrase"], "no names readable"))
    if t["names"]:
        out.append(check("example_copies", SCOPE, share(t["example_copies"], t["names"]), th["example_copies"],
                         f"{t['example_copies']} stored values copy the extraction prompt's examples "
                         f"({t['names']} names)" +
                         (f", e.g. {', '.join(repr(s) for s in t['copy_samples'][:3])}" if t["copy_samples"] else "")))
    else:
        out.append(not_measured("example_copies", SCOPE, th["example_copies"], "no stored values readable"))
    if t["structured"] is not None:
        out.append(_structured_check(t["structured"], th))
    fusion = t["fusion"]
    if fusion is not None:
        rate = share(fusion["merged"], fusion["judged"])
        judged_enough = fusion["judged"] >= int(th["merge_rate"].get("min_judged", 0))
        out.append(check("fusion_merge_rate", SCOPE, rate, th["merge_rate"],
                         f"{fusion['merged']} of {fusion['judged']} judged frame pairs merged" +
                         ("" if judged_enough else ": too few to judge"),
                         status=None if judged_enough else "ok"))
        against = fusion["contradicting"]
        out.append(check("contradicting_merges", SCOPE, share(against, fusion["merged"]), th["contradicting_merges"],
                         f"{against} of {fusion['merged']} merges give a reason saying the frames differ" +
                         (f", e.g. {fusion['contradicting_reasons'][0]!r}" if against else "")))
    return out
