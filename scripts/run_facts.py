"""What a bundle's build notes report per run, read from the run folders alone (no model call).

    python scripts/run_facts.py runs/locomo/seem-* runs/locomo/gsw-* ...

Prints one markdown row per run: index seconds and model calls (fresh / replayed from the cache:
an index built over several sessions shows its last session only), answer-stage calls, mean
context tokens, empty and truncated contexts, judge failures, contexts the cap audit flags
(13+ verbatim words of units beyond those counted against the cap), and the method's own
failure counters (every index statistic whose name ends in `_failed`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from statistics import mean
from typing import Any


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _calls(usage: dict[str, Any], stage: str) -> tuple[int, int]:
    node = (usage.get("stages") or {}).get(stage) or {}
    return int((node.get("fresh") or {}).get("calls", 0)), int((node.get("cached") or {}).get("calls", 0))


def _failures(stats: dict[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, value in stats.items():
        if isinstance(value, dict):
            for sub, n in _failures(value).items():
                out[f"{key}.{sub}"] = n
        elif key.endswith("_failed") and isinstance(value, int | float):
            out[key] = int(value)
    return out


def facts(run: Path) -> dict[str, Any]:
    """The figures of one finished run folder."""
    meta = json.loads((run / "meta.json").read_text(encoding="utf-8"))
    usage = json.loads((run / "usage.json").read_text(encoding="utf-8")) if (run / "usage.json").exists() else {}
    index = json.loads((run / "index.json").read_text(encoding="utf-8")) if (run / "index.json").exists() else {}
    preds = _jsonl(run / "predictions.jsonl")
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    corpora = index.get("corpora") or []
    failures: dict[str, int] = {}
    for c in corpora:
        for k, n in _failures(c.get("stats") or {}).items():
            failures[k] = failures.get(k, 0) + n
    return {
        "run": run.name, "method": meta.get("method"), "n": len(preds),
        "index_s": sum(float(c.get("seconds") or 0) for c in corpora),
        "index_calls": _calls(usage, "index"), "answer_calls": _calls(usage, "answer"),
        "judge_calls": _calls(usage, "judge"),
        "ctx_tokens": mean(p.get("context_tokens") or 0 for p in preds) if preds else 0.0,
        "empty": sum(1 for p in preds if not (p.get("context_text") or "").strip()),
        "truncated": sum(1 for p in preds if (p.get("retrieval") or {}).get("truncated")),
        "judge_failed": int(metrics.get("n_judge_failed") or 0),
        "beyond_cap": sum(1 for p in preds if (p.get("cap_audit") or {}).get("verbatim_beyond_units")),
        "failures": failures,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    args = ap.parse_args()
    print("| method | questions | index s (this run) | index calls fresh / cached | answer calls | judge calls "
          "| context tokens | empty | truncated | judge failed | beyond cap | method failures |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for run in args.runs:
        f = facts(run)
        fails = ", ".join(f"{k} {v}" for k, v in sorted(f["failures"].items())) or "none counted"
        print(f"| {f['method']} | {f['n']} | {f['index_s']:.0f} | {f['index_calls'][0]} / {f['index_calls'][1]} "
              f"| {f['answer_calls'][0]} | {f['judge_calls'][0]} | {f['ctx_tokens']:.0f} | {f['empty']} "
              f"| {f['truncated']} | {f['judge_failed']} | {f['beyond_cap']} | {fails} |")


if __name__ == "__main__":
    main()
