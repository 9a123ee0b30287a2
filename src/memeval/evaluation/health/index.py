"""Index checks, from the counts each method makes of its own index (methods.base.IndexCounters,
handed in as plain dicts by the layer above: evaluation/ never reads a method's files).

`index` is {"extracts": bool, "folder": str | None, "corpora": {corpus_id: counters | None}}:
`extracts` false for a method whose index is the text itself (Vanilla, Embedding RAG); a
corpus whose counters are None had no readable index folder. Counts of several corpora add up.
SEEM's extras: `fusion` (judged, merged, contradicting; pairs vetoed before the judge and judged
pairs refused, where the index has them) and `frame_retry` (frame replies asked again, and
what a retry left unfixed).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..runs.health_file import Check
from .grading import below, check, not_measured, pct, share

SCOPE = "index"


def _sum(corpora: list[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {"units": 0, "empty": {}, "at_least": set(), "names": 0, "names_not_noun_phrase": 0,
                             "name_samples": [], "example_copies": 0, "copy_samples": [], "fusion": None,
                             "validation": None, "frame_retry": None, "passages": 0, "values": 0,
                             "structured": None, "source_copies": None}
    for c in corpora:
        total["units"] += int(c.get("units", 0))
        for key, (n_empty, n_units) in (c.get("empty") or {}).items():
            e = total["empty"].setdefault(key, [0, 0])
            e[0], e[1] = e[0] + int(n_empty), e[1] + int(n_units)
        total["at_least"] |= set(c.get("at_least") or [])
        for key in ("names", "names_not_noun_phrase", "example_copies"):
            total[key] += int(c.get(key, 0))
        total["values"] += int(c.get("values") or c.get("names", 0))  # values the copies were counted over
        total["name_samples"] += list(c.get("name_samples") or [])
        total["copy_samples"] += list(c.get("copy_samples") or [])
        extra = c.get("extra") or {}
        total["passages"] += int(extra.get("passages", 0))
        validation = extra.get("validation")
        if validation:
            v = total["validation"] or {}
            for kind, (n, of) in (validation.get("dropped") or {}).items():
                a, b = v.get(kind, [0, 0])
                v[kind] = [a + int(n), b + int(of)]
            total["validation"] = v
        fusion = extra.get("fusion")
        if fusion:
            f = total["fusion"] or {"judged": 0, "merged": 0, "contradicting": 0, "contradicting_reasons": [],
                                    "vetoed": Counter(), "refused": Counter()}
            for key in ("judged", "merged", "contradicting"):
                f[key] += int(fusion.get(key, 0))
            f["contradicting_reasons"] += list(fusion.get("contradicting_reasons") or [])
            f["vetoed"].update(fusion.get("vetoed") or {})
            f["refused"].update(fusion.get("refused") or {})
            total["fusion"] = f
        if extra.get("frame_retry") is not None:
            total["frame_retry"] = (total["frame_retry"] or Counter()) + Counter(extra["frame_retry"])
        copies = extra.get("source_copies")
        if copies:
            a, b = total["source_copies"] or (0, 0)
            total["source_copies"] = (a + int(copies[0]), b + int(copies[1]))
        calls = extra.get("structured_calls")
        if calls:
            sc = total["structured"] or {"chat_attempts": 0, "chat_failed": 0, "schema_invalid": 0,
                                         "schema_repaired": 0, "failed_units": 0}
            for key in sc:
                sc[key] += int(calls.get(key, 0))
            total["structured"] = sc
    return total


def _counts(c: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items()))


def _retry_check(t: dict[str, Any], th: dict[str, Any]) -> Check:
    r, n = t["frame_retry"], t["passages"]
    left = sum(v for k, v in r.items() if k.startswith("left_"))
    return check("frame_retry", SCOPE, share(left, n), th.get("retry_left", {}),
                 f"{r['asked']} of {n} frame replies asked again (no events {r['asked_no_events']}, summary "
                 f"copying the passage's opening {r['asked_summary_copies_opening']}); left after the retry: "
                 f"no events {r['left_no_events']}, copied opening {r['left_summary_copies_opening']} "
                 f"({r['summary_cleared']} cleared beside events); retry failed {r['failed']}")


def _structured_check(sc: dict[str, Any], th: dict[str, Any]) -> Check:
    """Structured (JSON) extraction calls a package made that failed or missed its own schema
    (`extra["structured_calls"]`: Graphiti, cognee, mem0), and the units whose ingestion failed."""
    bad = sc["chat_failed"] + sc["schema_invalid"]
    return check("structured_call_failures", SCOPE, share(bad, sc["chat_attempts"]), th["structured_failures"],
                 f"{bad} of {sc['chat_attempts']} structured extraction calls failed or missed the package's "
                 f"schema ({sc['chat_failed']} raised, {sc['schema_invalid']} invalid); "
                 f"{sc['failed_units']} units failed to ingest"
                 + (f"; {sc['schema_repaired']} replies kept after their malformed items were left out"
                    if sc["schema_repaired"] else ""))


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


def _kind_check(dropped: dict[str, list[int]], th: dict[str, Any]) -> Check:
    """What a method's kind checks dropped from its extraction replies (GSW: non-entities,
    places that are people, times that are not times): the worst share over the kinds."""
    shares = {k: share(n, of) for k, (n, of) in dropped.items() if of}
    worst = max((v for v in shares.values() if v is not None), default=None)
    parts = "; ".join(f"{k} {pct(n, of)}" for k, (n, of) in sorted(dropped.items()) if of)
    return check("kind_drops", SCOPE, None if worst is None else round(worst, 4), th,
                 f"the kind checks dropped from the extraction replies: {parts or 'nothing checked'}")


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
    if t["values"]:
        counted = f"{t['names']} names" if t["values"] == t["names"] else f"{t['values']} stored values"
        out.append(check("example_copies", SCOPE, share(t["example_copies"], t["values"]), th["example_copies"],
                         f"{t['example_copies']} stored values copy the extraction prompt's examples "
                         f"({counted})" +
                         (f", e.g. {', '.join(repr(s) for s in t['copy_samples'][:3])}" if t["copy_samples"] else "")))
    else:
        out.append(not_measured("example_copies", SCOPE, th["example_copies"], "no stored values readable"))
    if t["validation"] is not None:
        out.append(_kind_check(t["validation"], th["kind_drops"]))
    if t["structured"] is not None:
        out.append(_structured_check(t["structured"], th))
    if t["source_copies"] is not None:
        n, of = t["source_copies"]
        out.append(check("source_copies", SCOPE, share(n, of), th["source_copies"],
                         f"{pct(n, of)} stored memories copy their unit's text nearly word for word: the "
                         "extraction model copied passages instead of writing facts, so retrieval runs over "
                         "copied text"))
    fusion = t["fusion"]
    if fusion is not None:
        rate = share(fusion["merged"], fusion["judged"])
        merged_of = f"{fusion['merged']} of {fusion['judged']} judged frame pairs merged"
        judged_enough = fusion["judged"] >= int(th["merge_rate"].get("min_judged", 0))
        gates = (f"; {sum(fusion['vetoed'].values())} pairs vetoed before the judge ({_counts(fusion['vetoed'])})"
                 if fusion["vetoed"] else "") + (f"; judged, not merged: {_counts(fusion['refused'])}"
                                                  if fusion["refused"] else "")
        out.append(check("fusion_merge_rate", SCOPE, rate, th["merge_rate"],
                         merged_of + ("" if judged_enough else ": too few to judge") + gates,
                         status=None if judged_enough else "ok"))
        floor = th["merge_floor"]
        if fusion["judged"] < int(floor.get("min_judged", 0)):
            few, why = "ok", ": too few to judge"
        else:
            few = below(rate, floor)
            why = "" if few == "ok" else (": fusion changed (almost) nothing, so this run measures the method "
                                          "close to its no-fusion ablation")
        out.append(check("fusion_merges_few", SCOPE, rate, floor, merged_of + why, status=few))
        against = fusion["contradicting"]
        out.append(check("contradicting_merges", SCOPE, share(against, fusion["merged"]), th["contradicting_merges"],
                         f"{against} of {fusion['merged']} merges give a reason saying the frames differ" +
                         (f", e.g. {fusion['contradicting_reasons'][0]!r}" if against else "")))
    if t["frame_retry"] is not None:
        out.append(_retry_check(t, th))
    return out
