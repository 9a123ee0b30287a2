"""Pictures of a workspace: Graphviz DOT text (always), and a PNG when matplotlib is installed.

    memeval audit gsw-render INDEX/chapters/3.json                 # text of the whole chapter
    memeval audit gsw-render INDEX/chapters/3.json --entity "Ezra Edwards" --dot ezra.dot
    memeval audit gsw-render RUN_DIR --entity "Ezra Edwards"       # every workspace of a run's index
    memeval audit gsw-render INDEX/<corpus id> --entity NAME        # every workspace of one corpus

A folder (a run folder, an index folder or one corpus's index) is searched for workspaces
(chapters/*.json, global/workspace.json), so the question "what does GSW believe about X"
has one answer across the corpus, for a benchmark or a custom dataset alike.

Entities are ellipses, verb phrases boxes (edges labelled with the valence question they
answer), Space nodes green and Time nodes blue diamonds labelled with their current value.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .workspace import Workspace, render_entity, render_text


def _q(s: str) -> str:
    return '"' + s[:80].replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def neighbourhood(ws: Workspace, entity_id: str) -> set[str]:
    """The entity, the verb phrases it takes part in, their other participants, its nodes."""
    keep = {entity_id}
    for v in ws.verbs.values():
        parts = v.participants()
        if entity_id in parts:
            keep.add(v.id)
            keep.update(parts)
    e = ws.entities[entity_id]
    keep.update(n for n in (e.space, e.time) if n)
    return keep


def to_dot(ws: Workspace, entity_id: str | None = None) -> str:
    """The workspace (or one entity's neighbourhood) as a Graphviz digraph."""
    keep = neighbourhood(ws, entity_id) if entity_id else None
    lines = [f"digraph {_q('gsw ' + ws.scope)} {{", "  rankdir=LR; node [fontsize=10];"]
    for e in ws.entities.values():
        if keep is None or e.id in keep:
            roles = ", ".join(dict.fromkeys(r.role for r in e.roles))[:60]
            lines.append(f"  {e.id} [label={_q(e.name + (chr(10) + roles if roles else ''))}, shape=ellipse];")
    for v in ws.verbs.values():
        if keep is None or v.id in keep:
            lines.append(f"  {v.id} [label={_q(v.phrase + ' @' + v.chunk)}, shape=box];")
            for q in v.questions:
                for a in q.answer_ids:
                    if keep is None or a in keep:
                        lines.append(f"  {v.id} -> {a} [label={_q(q.kind)}];")
    for n in ws.nodes.values():
        if keep is None or n.id in keep:
            colour = "palegreen" if n.kind == "space" else "lightblue"
            label = f"{n.kind}: {n.current} ({len(n.history)} values)"
            lines.append(f"  {n.id} [label={_q(label)}, shape=diamond, style=filled, fillcolor={colour}];")
            for e in n.entities:
                if keep is None or e in keep:
                    lines.append(f"  {e} -> {n.id} [style=dashed, arrowhead=none];")
    lines.append("}")
    return "\n".join(lines)


def write_png(ws: Workspace, path: Path, entity_id: str | None = None) -> bool:
    """Draw the graph with networkx + matplotlib; False (nothing written) when either is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import networkx as nx
    except ImportError:
        return False
    keep = neighbourhood(ws, entity_id) if entity_id else None
    g = nx.Graph()
    labels: dict[str, str] = {}
    for e in ws.entities.values():
        if keep is None or e.id in keep:
            g.add_node(e.id)
            labels[e.id] = e.name
    for v in ws.verbs.values():
        if keep is None or v.id in keep:
            g.add_node(v.id)
            labels[v.id] = v.phrase
            g.add_edges_from((v.id, a) for q in v.questions for a in q.answer_ids if a in g)
    for n in ws.nodes.values():
        if keep is None or n.id in keep:
            g.add_node(n.id)
            labels[n.id] = f"{n.kind}: {n.current}"
            g.add_edges_from((n.id, e) for e in n.entities if e in g)
    fig = plt.figure(figsize=(12, 9))
    nx.draw_networkx(g, pos=nx.spring_layout(g, seed=0), labels=labels, font_size=7, node_size=300)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def workspace_files(path: Path) -> list[Path]:
    """The workspace JSON files a path names: itself, or those under an index or run folder."""
    if path.is_file():
        return [path]
    if (path / "index.json").is_file():  # a run folder: follow it to its index folder
        path = Path(json.loads((path / "index.json").read_text(encoding="utf-8"))["index_folder"])
    if path.name == "chapters":
        found = list(path.glob("*.json"))
    else:
        found = list(path.glob("**/chapters/*.json")) + list(path.glob("**/global/workspace.json"))
    return sorted(found, key=lambda p: (str(p.parent), _natural(p.stem)))


def _natural(stem: str) -> tuple[int, str]:
    return (int(stem), "") if stem.isdigit() else (1 << 30, stem)


def _search(files: list[Path], entity: str) -> int:
    """Print the entity from every workspace that knows it; 1 when none does."""
    hits = 0
    for f in files:
        ws = Workspace.from_json(json.loads(f.read_text(encoding="utf-8")))
        found = ws.find(entity)
        if found is not None:
            hits += 1
            print(f"== {f} (workspace {ws.scope})\n{render_entity(ws, found.id)}\n")
    if not hits:
        print(f"no entity named {entity!r} in {len(files)} workspace(s)", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Show what a saved GSW workspace believes.")
    ap.add_argument("workspace", type=Path, help="a workspace JSON, or a run / index folder holding them")
    ap.add_argument("--entity", help="name (or alias) of one entity")
    ap.add_argument("--dot", type=Path, help="write Graphviz DOT here")
    ap.add_argument("--png", type=Path, help="write a PNG here (needs matplotlib)")
    a = ap.parse_args(argv)
    if a.workspace.is_dir():
        files = workspace_files(a.workspace)
        if not files:
            print(f"no GSW workspace under {a.workspace}", file=sys.stderr)
            return 1
        if not a.entity or len(files) > 1 and (a.dot or a.png):
            listing = "\n".join(f"  {f}" for f in files)
            print(f"{len(files)} workspace(s) under {a.workspace}; pass --entity NAME to search them, "
                  f"or one file for the whole workspace or a drawing:\n{listing}")
            return 0 if not a.entity else 2
        if len(files) > 1:
            return _search(files, a.entity)
        a.workspace = files[0]
    ws = Workspace.from_json(json.loads(a.workspace.read_text(encoding="utf-8")))
    eid = None
    if a.entity:
        found = ws.find(a.entity)
        if found is None:
            print(f"no entity named {a.entity!r} in {a.workspace}", file=sys.stderr)
            return 1
        eid = found.id
    print(render_entity(ws, eid) if eid else render_text(ws))
    if a.dot:
        a.dot.write_text(to_dot(ws, eid), encoding="utf-8")
    if a.png and not write_png(ws, a.png, eid):
        print("matplotlib is not installed: no PNG written (the DOT file renders with `dot -Tpng`)", file=sys.stderr)
    return 0

