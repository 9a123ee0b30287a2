"""The figures a bundle's NOTES.md states about its runs, read from the run folders alone.

Hand-typed notes drifted from their own tables (a LoCoMo NOTES said "no empty context in any
run" while its table showed two for GSW, and gave both 183 and 170 chunks). So the export
writes these facts into NOTES.md itself, between two markers, and keeps the hand-written
reading around them: empty contexts, failures, judge failures, index counts and index usage,
each from the run folder (meta.json, predictions.jsonl, metrics.json, usage.json, index.json,
health.json) and the index folder's usage record.
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean
from typing import Any

from ..runs.folder import read_jsonl_file
from ..runs.health_file import read_health
from ..runs.index_usage import read_index_usage

BEGIN = "<!-- run facts: written by `memeval bundle export` from the run folders; edits here are replaced -->"
END = "<!-- end of run facts -->"
SKIP_COUNTS = ("seconds", "resumed", "mode", "loaded_from_store")  # timings and flags, not counts


def _json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _calls(usage: dict[str, Any], stage: str) -> tuple[int, int]:
    node = (usage.get("stages") or {}).get(stage) or {}
    return int((node.get("fresh") or {}).get("calls", 0)), int((node.get("cached") or {}).get("calls", 0))


def _failures(stats: dict[str, Any]) -> dict[str, int]:
    """Every statistic whose name ends in `_failed` (nested keys as a.b)."""
    out: dict[str, int] = {}
    for key, value in stats.items():
        if isinstance(value, dict):
            for sub, n in _failures(value).items():
                out[f"{key}.{sub}"] = n
        elif key.endswith("_failed") and isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = int(value)
    return out


def _counts(entry: dict[str, Any]) -> dict[str, int]:
    """An index's own counts: the method's top-level stats (chunks, entities, frames ...) and a
    package's index counts (GraphRAG entities, relationships; HippoRAG's graph), no timings."""
    out: dict[str, int] = {}
    sources = [entry.get("stats") or {}]
    index = (entry.get("info") or {}).get("index") or {}
    sources += [index, *(v for v in index.values() if isinstance(v, dict))]
    for src in sources:
        for k, v in src.items():
            if isinstance(v, int) and not isinstance(v, bool) and not any(s in k for s in SKIP_COUNTS) \
                    and not k.endswith("_failed"):
                out[k] = out.get(k, 0) + v
    return out


def method_of(run: Path, meta: dict[str, Any] | None = None) -> str:
    """The run's method: meta.json's, else its folder name without the config hash."""
    meta = _json(run / "meta.json") if meta is None else meta
    return str(meta.get("method") or run.name.rsplit("-", 1)[0])


def facts(run: Path) -> dict[str, Any]:
    """The figures of one finished run folder."""
    run = Path(run)
    meta, usage = _json(run / "meta.json"), _json(run / "usage.json")
    index, metrics = _json(run / "index.json"), _json(run / "metrics.json")
    preds = read_jsonl_file(run / "predictions.jsonl")  # plain or packed
    corpora = index.get("corpora") or []
    failures: dict[str, int] = {}
    counts: dict[str, int] = {}
    for c in corpora:  # the method's stats, and a package's own index record (Graphiti's chat_failed)
        package = (c.get("info") or {}).get("index") or {}  # its per-episode list is not read: totals only
        for k, n in [*_failures(c.get("stats") or {}).items(), *_failures(package).items()]:
            failures[k] = failures.get(k, 0) + n
        for k, n in _counts(c).items():
            counts[k] = counts.get(k, 0) + n
    empty = [p.get("question_id", "?") for p in preds if not (p.get("context_text") or "").strip()]
    health = read_health(run)
    iu = read_index_usage(run)
    return {
        "run": run.name, "method": method_of(run, meta), "n": len(preds),
        "index_s": sum(float(c.get("seconds") or 0) for c in corpora),
        "index_calls": _calls(usage, "index"), "answer_calls": _calls(usage, "answer"),
        "judge_calls": _calls(usage, "judge"),
        "index_usage": {"calls": iu.calls, "tokens": iu.tokens, "recorded": iu.recorded},
        "ctx_tokens": mean(p.get("context_tokens") or 0 for p in preds) if preds else 0.0,
        "empty": len(empty), "empty_ids": empty,
        "truncated": sum(1 for p in preds if (p.get("retrieval") or {}).get("truncated")),
        "judge_failed": int(metrics.get("n_judge_failed") or 0),
        "beyond_cap": sum(1 for p in preds if (p.get("cap_audit") or {}).get("verbatim_beyond_units")),
        "failures": failures, "counts": counts,
        "health": None if health is None else health.mark(),
        # recorded by runs from run format 3 on (None: an older run, indexed by its answering model)
        "index_model": meta.get("index_model") if meta.get("index_model") != meta.get("answer_model") else None,
        "experiment": meta.get("experiment") if isinstance(meta.get("experiment"), dict) else None,
    }


def table(rows: list[dict[str, Any]]) -> list[str]:
    """The per-run table (also what `memeval audit run-facts` prints)."""
    out = ["| method | questions | index s (this run) | index calls fresh / cached (this run) "
           "| index build calls / tokens | answer calls fresh / cached | judge calls fresh / cached "
           "| context tokens | empty contexts | truncated | judge failed | beyond cap | method failures |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for f in rows:
        fails = ", ".join(f"{k} {v}" for k, v in sorted(f["failures"].items())) or "none counted"
        iu = f["index_usage"]
        build = f"{iu['calls']:,} / {iu['tokens']:,}" + ("" if iu["recorded"] or not iu["calls"] else " (this run)")
        out.append(f"| {f['method']} | {f['n']} | {f['index_s']:.0f} | {f['index_calls'][0]} / {f['index_calls'][1]} "
                   f"| {build} | {f['answer_calls'][0]} / {f['answer_calls'][1]} | {f['judge_calls'][0]} / {f['judge_calls'][1]} "
                   f"| {f['ctx_tokens']:,.0f} "
                   f"| {f['empty']} | {f['truncated']} | {f['judge_failed']} | {f['beyond_cap']} | {fails} |")
    return out


def section(runs: list[Path], extra: list[str] | None = None) -> str:
    """The generated block of NOTES.md: the table, then one line per kind of fact, so no hand-typed
    sentence has to say "none" or repeat a count; `extra` lines (the health table) close it."""
    rows = [facts(r) for r in runs]
    lines = [BEGIN, "", "## Run facts (generated from the run folders)", "", *table(rows), ""]
    empty = [f"{f['method']} {f['empty']} of {f['n']} ({', '.join(f['empty_ids'][:5])}"
             f"{', ...' if f['empty'] > 5 else ''})" for f in rows if f["empty"]]
    lines.append("- Empty contexts (blank text; package refusal strings are counted by `memeval health`): "
                 + ("; ".join(empty) if empty else "none in any run") + ".")
    failed = [f"{f['method']} {f['judge_failed']}" for f in rows if f["judge_failed"]]
    lines.append("- Judge failures: " + ("; ".join(failed) if failed else "none in any run") + ".")
    beyond = [f"{f['method']} {f['beyond_cap']}" for f in rows if f["beyond_cap"]]
    lines.append("- Contexts the cap audit flags (verbatim text of units beyond the cap): "
                 + ("; ".join(beyond) if beyond else "none in any run") + ".")
    trunc = [f"{f['method']} {f['truncated']}" for f in rows if f["truncated"]]
    lines.append("- Truncated contexts: " + ("; ".join(trunc) if trunc else "none in any run") + ".")
    fails = [f"{f['method']}: " + ", ".join(f"{k} {v}" for k, v in sorted(f["failures"].items()))
             for f in rows if any(f["failures"].values())]
    lines.append("- Method failure counters (index statistics named `*_failed`): "
                 + ("; ".join(fails) if fails else "all 0") + ".")
    for f in rows:
        if f["counts"]:
            lines.append(f"- {f['method']} index: " + ", ".join(f"{k} {v:,}" for k, v in f["counts"].items()) + ".")
    lines.extend(_setup_lines(rows))
    health = [f"{f['method']}: {f['health']}" for f in rows if f["health"] is not None]
    unchecked = [f["method"] for f in rows if f["health"] is None]
    if health:
        lines.append("- Health (`memeval health`): " + "; ".join(health) + ".")
    if unchecked:
        lines.append(f"- Health not checked: {', '.join(unchecked)}.")
    return "\n".join([*lines, *(extra or []), "", END])


def _setup_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The experiment and its deviations, and the runs indexed by a model of their own (only what
    the runs record: a bundle of older runs reads as before)."""
    out = []
    named = [f for f in rows if f.get("experiment")]
    if named:
        names = ", ".join(dict.fromkeys(str(f["experiment"].get("name")) for f in named))
        devs = [f"{f['method']}: {'; '.join(f['experiment']['deviations'])}" for f in named
                if f["experiment"].get("deviations")]
        out.append(f"- Experiment: {names}" + (f"; deviations from its reference: {' | '.join(devs)}" if devs else "")
                   + ".")
    own = [f"{f['method']} {f['index_model']}" for f in rows if f.get("index_model")]
    if own:
        out.append(f"- Indexing model (not the answering model): {', '.join(own)}.")
    return out


def merge(hand: str, generated: str) -> str:
    """NOTES.md: the hand-written text with the generated block in place of the previous one
    (between the markers), or appended after it when the notes have none yet. Notes cut inside
    the block (the hand-written part taken up to its heading) keep no part of it."""
    if BEGIN in hand and END in hand:
        head, rest = hand.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        return head + generated + tail
    hand = hand.split(BEGIN, 1)[0]
    return hand.rstrip("\n") + ("\n\n" if hand.strip() else "") + generated + "\n"
