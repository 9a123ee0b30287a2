"""What GSW's kind checks (methods/gsw/kinds.py, `validate_kinds`) do to a saved index, without a model.

Each chapter's saved Operator and space-time replies are reconciled again in chunk order (the
output guard as before, no forward-falling calls), once without the kind checks (what the
index was built with before issue 26) and once with them, and the figures of both are printed:
entity names that are not noun phrases (the health check's heuristic), values of each kind the
checks drop or repair, places that name a person, times that are not times.

    memeval audit gsw-entities results/epbench20-local/indexes/gsw-4b40f1118a
    memeval audit gsw-entities INDEX_DIR --show 20    # the first 20 drops of each kind
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from memeval.methods.gsw.counters import kind_validation
from memeval.methods.gsw.frame import speaker_lines
from memeval.methods.gsw.kinds import check_kinds, is_time
from memeval.methods.gsw.operator import outputs_of
from memeval.methods.gsw.reconciler import Reconciler, chunk_workspace
from memeval.methods.gsw.workspace import ChunkRecord, Workspace
from memeval.methods.output_guard import name_problem


def _chapters(index: Path) -> list[Path]:
    return sorted(index.glob("*/chapters/*.json")) or sorted(index.glob("chapters/*.json"))


def _framed(chunks: list[ChunkRecord]) -> bool:
    """Chunks of an index built with `speaker_frame` (one 'Speaker: ...' line per turn)."""
    return any("\n" in r.text and speaker_lines(r.text) for r in chunks)


def reconcile(chunks: list[ChunkRecord], validate: bool) -> tuple[Workspace, list[dict[str, Any]]]:
    """One chapter's saved replies reconciled again; the chunk records as a workspace saves them."""
    framed = _framed(chunks)
    ws = Workspace(scope="audit")
    rec = Reconciler(ws, forward_falling=False, validate_kinds=validate)
    for r in chunks:
        r = r.model_copy(deep=True)
        op, st = outputs_of(r)
        cw = chunk_workspace(r, op, st, rec.persons if validate else None, framed=framed)
        asyncio.run(rec.add(cw))
    return ws, [c.model_dump(mode="json") for c in ws.chunks]


def drops(chunks: list[ChunkRecord]) -> dict[str, list[str]]:
    """The values the kind checks drop, by kind (for --show), replayed chunk by chunk."""
    out: dict[str, list[str]] = {"entities": [], "places": [], "times": []}
    framed = _framed(chunks)
    ws = Workspace(scope="audit")
    rec = Reconciler(ws, forward_falling=False)
    for r in chunks:
        op, st = outputs_of(r)
        if op is not None:
            kept, kept_st, _ = check_kinds(op, st, r.text, rec.persons, speaker_lines(r.text) if framed else [])
            ids = {e.id for e in kept.entities}
            out["entities"] += [e.name for e in op.entities if e.id not in ids]
            after = {x.value for x in (kept_st.links if kept_st else []) if x.value}  # a place moved to a time stays
            for x in st.links if st else []:
                if x.value and x.value not in after:
                    out["places" if x.kind == "space" else "times"].append(x.value)
        asyncio.run(rec.add(chunk_workspace(r.model_copy(deep=True), op, st, rec.persons, framed=framed)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("index", nargs="+", type=Path, help="a GSW index folder (gsw-<hash>) or one corpus in it")
    ap.add_argument("--show", type=int, default=0, help="print the first N dropped values of each kind")
    args = ap.parse_args(argv)
    for index in args.index:
        paths = _chapters(index)
        if not paths:
            print(f"{index}: no chapters/*.json", file=sys.stderr)
            return 2
        names: dict[bool, list[str]] = {False: [], True: []}
        values: dict[bool, Counter[str]] = {False: Counter(), True: Counter()}
        checked: list[dict[str, Any]] = []
        shown: dict[str, list[str]] = {"entities": [], "places": [], "times": []}
        for p in paths:
            saved = [ChunkRecord.model_validate(c) for c in json.loads(p.read_text(encoding="utf-8"))["chunks"]]
            for validate in (False, True):
                ws, records = reconcile(saved, validate)
                names[validate] += [e.name for e in ws.entities.values()]
                for n in ws.nodes.values():
                    for h in n.history:
                        values[validate][n.kind] += 1
                        values[validate][f"{n.kind}_not_time"] += n.kind == "time" and not is_time(h.value)
                if validate:
                    checked += records
            if args.show:
                for k, v in drops(saved).items():
                    shown[k] += v
        report = kind_validation(checked) or {"dropped": {}, "repaired": {}}
        print(f"== {index} ({len(paths)} chapters)")
        for validate, label in ((False, "before (as indexed)"), (True, "after (validate_kinds)")):
            bad = sum(1 for n in names[validate] if name_problem(n))
            v = values[validate]
            print(f"{label:24} entities {len(names[validate]):4}  not noun phrases {bad:3} "
                  f"({100 * bad / max(1, len(names[validate])):.0f}%)  place values {v['space']:4}  "
                  f"time values {v['time']:4}  times that are not times {v['time_not_time']:3}")
        for what in ("dropped", "repaired"):
            for kind, (n, of) in report[what].items():
                print(f"  {what:8} {kind:13} {n:4} of {of:4} ({100 * n / max(1, of):.0f}%)")
        for kind, vals in shown.items():
            if vals:
                print(f"  dropped {kind}: " + "; ".join(repr(x) for x in vals[:args.show]))
    return 0
