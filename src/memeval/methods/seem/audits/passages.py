"""The passage-size measurement's table, from SEEM run folders alone (no model call): per run its
passage setting, passages and frames per session, what fusion did (judged, merged, vetoed,
refused), what the frame retry did, and the scores (LoCoMo's J, F1, evidence recall and J per
category; "-" for another dataset), context tokens and the index's chat calls (as built, also
for a run that reused the index). methods/seem/README.md ("Passage size") says how the
default is chosen from it.

    memeval audit seem-passages runs/locomo/seem-*
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from memeval.evaluation.runs.folder import RunFolder
from memeval.evaluation.runs.index_usage import read_index_usage
from memeval.evaluation.runs.scoring import read_metrics
from memeval.evaluation.runs.upgrade import read_config

COLUMNS = ("run", "passage_turns", "prompt / veto / retry", "passages", "frames/session", "judged", "merged",
           "vetoed", "refused", "retry asked/left", "J", "F1", "evidence recall", "J by category",
           "context tokens", "index chat calls")


def _fmt(x: Any) -> str:
    return f"{x:.3f}" if isinstance(x, float) else "-" if x is None else str(x)


def row(run: Path) -> list[str]:
    method = read_config(run).method
    index = json.loads((run / "index.json").read_text())
    stats = [c["stats"] for c in index["corpora"]]
    units = sum(s.get("units", c["units"]) for s, c in zip(stats, index["corpora"], strict=True))
    fusion = [s.get("fusion", {}) for s in stats]
    retry = [s.get("frame_retry") for s in stats if s.get("frame_retry")]
    m = read_metrics(RunFolder(run))
    preds = RunFolder(run).read_jsonl("predictions.jsonl")
    built = read_index_usage(run)  # what building the index took, also for a run that reused it
    chat = sum(m["calls"] for name, m in built.by_model.items() if name == method_model(run))
    names = m.get("category_names", {})
    by_cat = ", ".join(f"{names.get(c, c)} {v['judge']:.2f}" for c, v in sorted(m.get("categories", {}).items())
                       if "judge" in v)
    total = lambda key: sum(int(f.get(key, 0)) for f in fusion)  # noqa: E731
    merged_by = lambda key: sum(sum((f.get(key) or {}).values()) for f in fusion)  # noqa: E731
    return [run.name, _fmt(method.get("passage_turns")),
            f"{method.get('prompt_version')} / {method.get('fusion_veto_days')} / {method.get('frame_retry')}",
            _fmt(sum(s["passages"] for s in stats)), _fmt(sum(s["frames_after_fusion"] for s in stats) / units),
            _fmt(total("judged")), _fmt(total("merged")), _fmt(merged_by("vetoed")), _fmt(merged_by("refused")),
            f"{sum(r['asked'] for r in retry)}/{sum(r['left_no_events'] + r['left_summary_copies_opening'] for r in retry)}"
            if retry else "off",
            *(_fmt(m.get("overall", {}).get(k)) for k in ("judge", "f1", "evidence_recall")),
            by_cat, _fmt(round(sum(p["context_tokens"] for p in preds) / max(1, len(preds)))),
            f"{chat} ({built.source})"]


def method_model(run: Path) -> str:
    """The indexing model's name in the usage records (the answering model indexes)."""
    return str(read_config(run).llm.model)


def main(argv: list[str] | None = None) -> int:
    runs = [Path(a) for a in (sys.argv[1:] if argv is None else argv)]
    if not runs:
        raise SystemExit(__doc__)
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row(r)) + " |" for r in runs]
    print("\n".join(lines))
    return 0
