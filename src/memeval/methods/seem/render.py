"""What SEEM believes about X, from a saved index alone (no model call):

    memeval audit seem-render PATH --entity "Mira Tolk"
    memeval audit seem-render PATH --query "kite festival"
    memeval audit seem-render PATH --summary
    memeval audit seem-render PATH --merges      # every merge as the judge read it, to be judged
    memeval audit seem-render PATH --pairs       # + the judged pairs that did not merge, and the vetoed

PATH is a run folder (its index.json names the index folder), an index folder
(`runs/_indexes/seem-<hash>`), or one corpus's folder in it (holding memory.json); with several
corpora, pick one with --corpus ID. --entity lists the facts about every name the entity was
merged with, the frames that mention it, and the fusion decisions behind those frames; --query
ranks frames by BM25 (the index's own lexical retriever). --merges lists each merge with the two
frame texts the judge read, its identity check and reason, and a box for a reader to tick (one
event or not); the texts are stored from prompt version 3 on (for the shipped version-2
bundles, `memeval audit seem-fusion --pairs` rebuilds them from the bundled calls).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .frames import Frame
from .graph import norm
from .retrieval import BM25Frames
from .rpe import fact_line, frame_block


def corpus_folder(path: Path, corpus: str | None) -> Path:
    """Resolve a run folder, index folder or corpus folder to one corpus folder."""
    if (path / "index.json").exists() and not (path / "memory.json").exists():
        path = Path(json.loads((path / "index.json").read_text())["index_folder"])
    if (path / "memory.json").exists():
        return path
    if corpus:
        if not (path / corpus / "memory.json").exists():
            raise SystemExit(f"no finished SEEM index for corpus {corpus!r} under {path}")
        return path / corpus
    found = sorted(p.parent for p in path.glob("*/memory.json"))
    if len(found) == 1:
        return found[0]
    if not found:
        raise SystemExit(f"no SEEM index under {path}: pass a run folder, index folder or corpus folder")
    raise SystemExit(f"{len(found)} corpora under {path}; choose one with --corpus "
                     f"({', '.join(p.name for p in found[:10])}{' ...' if len(found) > 10 else ''})")


def load(folder: Path) -> tuple[list[Frame], list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    memory = json.loads((folder / "memory.json").read_text())
    graph = json.loads((folder / "graph.json").read_text()) if (folder / "graph.json").exists() else {}
    summary = json.loads((folder / "summary.json").read_text()) if (folder / "summary.json").exists() else {}
    return [Frame.from_json(f) for f in memory["frames"]], memory["decisions"], graph, summary


def about_entity(name: str, frames: list[Frame], decisions: list[dict[str, Any]], graph: dict[str, Any]) -> str:
    key = norm(name)
    aliases: dict[str, str] = graph.get("aliases", {})
    canon = {c for v, c in aliases.items() if key and (key in v or v in key and len(v) >= 3)}
    variants = {v for v, c in aliases.items() if c in canon} | {key}
    out = [f"# {name}", f"graph nodes: {', '.join(sorted(canon)) or '(none)'}",
           f"variants merged into them: {', '.join(sorted(variants - {key})) or '(none)'}", "", "## Facts"]
    facts = [f for f in graph.get("facts", []) if f["subject"] in canon or f["object"] in canon]
    out += [fact_line(f) for f in facts] or ["(none)"]
    hits = [f for f in frames if any(v and v in norm(f.text()) for v in variants)]
    out += ["", "## Frames"] + ([frame_block(f) + "\n" for f in hits] or ["(none)"])
    ids = {f.id for f in hits}
    related = [d for d in decisions if d["new"] in ids or d["existing"] in ids]
    out += ["## Fusion decisions on those frames"]
    out += [f"- {d['new']} -> {d['existing']} sim {d['similarity']}: {d['level']}"
            f"{' (merged)' if d.get('merged') else ''} [{d['stage']}] {d['reason']}" for d in related] or ["(none)"]
    return "\n".join(out)


def about_query(query: str, frames: list[Frame], n: int) -> str:
    ranking = BM25Frames([f.text() for f in frames]).ranking(query, n)
    return "\n\n".join([f"# frames for: {query}"] + [frame_block(frames[i]) for i in ranking]) if ranking \
        else f"# frames for: {query}\n(no frame shares a word with the query)"


def pair_blocks(decisions: list[dict[str, Any]], vetoed: list[dict[str, Any]], merged_only: bool) -> str:
    """Markdown, one block per pair: passages, verdict, the two texts, a reader's box."""
    shown = [d for d in decisions if d.get("merged") or not merged_only]
    out = [f"# {sum(bool(d.get('merged')) for d in decisions)} merges of {len(decisions)} judged pairs"
           f"{f', {len(vetoed)} vetoed before the judge' if vetoed else ''}"]
    for d in shown:
        check = d.get("check") or {}
        out += ["", f"## {d['new']} -> {d['existing']} ({d['stage']}): {d['level']}"
                f"{', merged' if d.get('merged') else ', not merged: ' + str(d.get('refused') or d['level'])}",
                f"passages {', '.join(d.get('new_provenance', []))} -> {', '.join(d.get('existing_provenance', []))}; "
                f"similarity {d['similarity']}" + (f"; check {json.dumps(check)}" if check else ""),
                f"reason: {d['reason']}"]
        texts = d.get("texts")
        out += (["A (in memory):", texts["existing"], "B (new):", texts["new"]] if texts else
                ["(frame texts not stored: prompt version 2; memeval audit seem-fusion --pairs rebuilds them)"])
        if d.get("merged"):
            out.append("reader: one event?  [ ] yes  [ ] no")
    for v in [] if merged_only else vetoed:
        out += ["", f"## {v['new']} -> {v['existing']} ({v['stage']}): vetoed ({v['veto']})",
                f"passages {', '.join(v['new_provenance'])} -> {', '.join(v['existing_provenance'])}",
                "A (in memory):", v["texts"]["existing"], "B (new):", v["texts"]["new"]]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", type=Path)
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--entity", default=None)
    ap.add_argument("--query", default=None)
    ap.add_argument("--summary", action="store_true", help="index statistics (frames before/after fusion, graph)")
    ap.add_argument("--merges", action="store_true", help="every merge as the judge read it, for a reader")
    ap.add_argument("--pairs", action="store_true", help="every judged pair and every vetoed pair")
    ap.add_argument("-n", type=int, default=5, help="frames for --query")
    args = ap.parse_args(argv)
    if not (args.entity or args.query or args.summary or args.merges or args.pairs):
        ap.error("give --entity NAME, --query TEXT, --summary, --merges or --pairs")
    folder = corpus_folder(args.path, args.corpus)
    frames, decisions, graph, summary = load(folder)
    parts = []
    if args.summary:
        parts.append(json.dumps(summary, indent=1))
    if args.entity:
        parts.append(about_entity(args.entity, frames, decisions, graph))
    if args.query:
        parts.append(about_query(args.query, frames, args.n))
    if args.merges or args.pairs:
        vetoed = json.loads((folder / "memory.json").read_text()).get("vetoed", [])
        parts.append(pair_blocks(decisions, vetoed, merged_only=not args.pairs))
    sys.stdout.write("\n\n".join(parts) + "\n")
    return 0

