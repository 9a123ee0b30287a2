"""How faithful was GSW's Operator? Measured from a saved index, no model call.

    memeval audit gsw-operator RUN_OR_INDEX_DIR [--json]

RUN_OR_INDEX_DIR is a run folder (its index.json names the index folder), an index folder
(`<index_root>/gsw-<hash>`), or one corpus folder of it. Every chunk record keeps the Operator's
and the space-time call's raw (validated) replies, so this works on indexes built with the old
prompts (workspace format 1) as well as the new ones: it prints, per chapter and in total,
- the share of Operator replies holding a value copied from a prompt's examples (the examples
  of the first prompt version, which came from the 20-chapter book, and of the current one),
  counted only where the chunk's own text does not contain that value;
- what the output guard drops (or would drop, for an old index): invented entities, copied
  roles, states, actions, place/time values; and how many entity names run to 5+ words
  (clause-like names such as "The other participants watched in awe", counted, not dropped);
- forward-falling questions: asked in one chunk and answered by a later one, or still open
  (answers such as "None" or "not stated" count as open), and the predictive ones among them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from memeval.methods.gsw.guard import (
    NEW_EXAMPLES,
    OLD_EXAMPLES,
    PREVIOUS_EXAMPLES,
    ChunkText,
    copied,
    guard_links,
    guard_operator,
    reply_values,
)
from memeval.methods.gsw.schemas import OperatorOutput, SpaceTimeOutput
from memeval.methods.gsw.workspace import is_unanswered


def corpus_dirs(path: Path) -> list[Path]:
    """The corpus folders (holding chapters/, extract/ or global/) a path stands for."""
    if (path / "index.json").exists():
        path = Path(json.loads((path / "index.json").read_text())["index_folder"])
    if any((path / d).is_dir() for d in ("chapters", "extract", "global")):
        return [path]
    found = sorted(p for p in path.iterdir() if p.is_dir() and any((p / d).is_dir() for d in ("chapters", "extract", "global")))
    if not found:
        raise SystemExit(f"{path}: no GSW workspaces here (expected chapters/, extract/ or global/ folders)")
    return found


def _chunks_and_verbs(corpus: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    chunks: list[dict[str, Any]] = []
    verbs: list[dict[str, Any]] = []
    for f in sorted((corpus / "chapters").glob("*.json")):
        ws = json.loads(f.read_text(encoding="utf-8"))
        chunks += ws.get("chunks", [])
        verbs += list(ws.get("verbs", {}).values())
    glob = corpus / "global" / "workspace.json"
    if glob.exists():
        ws = json.loads(glob.read_text(encoding="utf-8"))
        chunks += ws.get("chunks", [])
        verbs += list(ws.get("verbs", {}).values())
    elif not chunks:
        for f in sorted((corpus / "extract").glob("*.json")):
            chunks += json.loads(f.read_text(encoding="utf-8")).get("chunks", [])
    return chunks, verbs


def audit(corpus: Path) -> dict[str, Any]:
    chunks, verbs = _chunks_and_verbs(corpus)
    per: dict[str, Counter[str]] = {}
    for c in chunks:
        row = per.setdefault(str(c.get("chapter", "?")), Counter())
        row["chunks"] += 1
        if c.get("operator") is None:
            row["operator_failed"] += 1
            continue
        op = OperatorOutput.model_validate(c["operator"])
        st = SpaceTimeOutput.model_validate(c["space_time"]) if c.get("space_time") else None
        text = ChunkText(c.get("text", ""))
        values = reply_values(op, st)
        row["replies"] += 1
        old, new = copied(values, text, OLD_EXAMPLES), copied(values, text, (*NEW_EXAMPLES, *PREVIOUS_EXAMPLES))
        row["replies_copying_old_examples"] += bool(old)
        row["replies_copying_new_examples"] += bool(new)
        row["copied_values"] += len(old) + len(new)
        row["entities_in_replies"] += len(op.entities)
        row["long_names"] += sum(1 for e in op.entities if len(e.name.split()) >= 5)  # clause-like names
        _, drops = guard_operator(op, c.get("text", ""))
        if st is not None:
            drops.update(guard_links(st, c.get("text", ""))[1])
        drops.pop("replies_copying_examples", None)
        row.update(drops)
    for v in verbs:
        for q in v.get("questions", []):
            if q.get("answered_in") == q.get("asked_in"):
                continue  # answered by the chunk that asked it: not forward-falling
            row = per.setdefault(str(q.get("asked_in", "?")).rsplit(".", 1)[0], Counter())
            is_open = not q.get("answer_ids") and is_unanswered(q.get("answer_text", ""))
            row["ff_open" if is_open else "ff_answered_later"] += 1
            if q.get("kind") == "predictive":
                row["predictive_open" if is_open else "predictive_answered"] += 1
    total: Counter[str] = Counter()
    for row in per.values():
        total.update(row)
    return {"corpus": str(corpus), "per_chapter": {k: dict(v) for k, v in per.items()}, "total": dict(total)}


def _share(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f}%)" if d else "0/0"


def report(result: dict[str, Any]) -> str:
    t = result["total"]
    replies = t.get("replies", 0)
    lines = [f"GSW Operator audit: {result['corpus']}",
             f"  chunks {t.get('chunks', 0)}, Operator replies {replies} (failed {t.get('operator_failed', 0)})",
             f"  replies copying the old (benchmark) examples: {_share(t.get('replies_copying_old_examples', 0), replies)}",
             f"  replies copying the current examples:        {_share(t.get('replies_copying_new_examples', 0), replies)}",
             f"  entities dropped by the guard: {_share(t.get('entities_dropped', 0), t.get('entities_in_replies', 0))}; "
             f"roles {t.get('roles_dropped', 0)}, states {t.get('states_dropped', 0)}, actions "
             f"{t.get('actions_dropped', 0)}, place/time values {t.get('link_values_dropped', 0)}",
             f"  entity names of 5+ words (clause-like, kept): {_share(t.get('long_names', 0), t.get('entities_in_replies', 0))}",
             f"  forward-falling questions: answered later {t.get('ff_answered_later', 0)}, open {t.get('ff_open', 0)} "
             f"(predictive: answered {t.get('predictive_answered', 0)}, open {t.get('predictive_open', 0)})",
             "  per chapter: chapter replies copied_old copied_new entities_dropped ff_answered_later ff_open"]
    for ch, r in sorted(result["per_chapter"].items(), key=lambda kv: (len(kv[0]), kv[0])):
        lines.append(f"    {ch:>6} {r.get('replies', 0):>7} {r.get('replies_copying_old_examples', 0):>10} "
                     f"{r.get('replies_copying_new_examples', 0):>10} {r.get('entities_dropped', 0):>16} "
                     f"{r.get('ff_answered_later', 0):>17} {r.get('ff_open', 0):>7}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", type=Path, help="run folder, GSW index folder, or one corpus folder of it")
    ap.add_argument("--json", action="store_true", help="print JSON instead of text")
    a = ap.parse_args(argv)
    if not a.path.exists():
        print(f"{a.path}: no such folder", file=sys.stderr)
        return 2
    results = [audit(c) for c in corpus_dirs(a.path)]
    print(json.dumps(results, indent=1) if a.json else "\n\n".join(report(r) for r in results))
    return 0
