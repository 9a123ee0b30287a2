"""Graph Memory Layer: relational quadruples with provenance, lexical variants merged into one
node by embedding similarity, and personalised PageRank (networkx) seeded by the question.

Nodes are entities ("e:<name>") and passages ("p:<passage id>"); a fact links its subject and
object, and each links to the passage the fact came from, so PageRank mass flows from the
question's entities to the passages (and so the frames) that talk about them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np


def norm(name: str) -> str:
    """Lower case, punctuation to spaces, single spaces: the exact-match key of a name."""
    return " ".join(re.sub(r"[^\w]+", " ", name.lower()).split())


def ent(name: str) -> str:
    return f"e:{name}"


def pas(pid: str) -> str:
    return f"p:{pid}"


@dataclass
class GraphLayer:
    facts: list[dict[str, Any]] = field(default_factory=list)   # canonical subject/object + passage
    aliases: dict[str, str] = field(default_factory=dict)        # normalised variant -> canonical name
    merges: list[dict[str, Any]] = field(default_factory=list)   # embedding merges, for audit
    graph: nx.Graph = field(default_factory=nx.Graph)
    names: list[str] = field(default_factory=list)               # canonical names (rows of name_vectors)
    name_vectors: np.ndarray | None = None

    def to_json(self) -> dict[str, Any]:
        return {"facts": self.facts, "aliases": self.aliases, "merges": self.merges, "names": self.names}

    def stats(self) -> dict[str, int]:
        kinds = Counter(str(n)[:2] for n in self.graph.nodes)
        return {"graph_nodes": self.graph.number_of_nodes(), "graph_edges": self.graph.number_of_edges(),
                "entity_nodes": kinds["e:"], "passage_nodes": kinds["p:"], "facts": len(self.facts),
                "node_merges": len(self.merges)}


async def resolve_names(embedder: Any, counts: Counter[str], threshold: float) -> tuple[dict[str, str], list[dict]]:
    """Map every normalised name to a canonical one: exact normalised matches first, then a name
    joins the most similar earlier (more frequent) canonical name when cosine >= threshold."""
    display: dict[str, str] = {}
    by_key: Counter[str] = Counter()
    for name, c in counts.most_common():
        display.setdefault(norm(name), name)
        by_key[norm(name)] += c
    keys = sorted((k for k in display if k), key=lambda k: (-by_key[k], k))
    if not keys:
        return {}, []
    vecs = await embedder.embed([display[k] for k in keys], "document")
    aliases: dict[str, str] = {}
    canon_rows: list[int] = []
    merges: list[dict[str, Any]] = []
    for i, k in enumerate(keys):
        if canon_rows:
            sims = vecs[canon_rows] @ vecs[i]
            j = int(np.argmax(sims))
            if sims[j] >= threshold:
                target = display[keys[canon_rows[j]]]
                aliases[k] = target
                merges.append({"variant": display[k], "into": target, "similarity": round(float(sims[j]), 4)})
                continue
        canon_rows.append(i)
        aliases[k] = display[k]
    return aliases, merges


async def build_graph(embedder: Any, facts_by_passage: list[tuple[str, list[dict[str, Any]]]],
                      merge_threshold: float) -> GraphLayer:
    """The graph of every passage's facts (passages in corpus order)."""
    counts: Counter[str] = Counter()
    for _, facts in facts_by_passage:
        for f in facts:
            counts[f["subject"].strip()] += 1
            counts[f["object"].strip()] += 1
    aliases, merges = await resolve_names(embedder, counts, merge_threshold)
    layer = GraphLayer(aliases=aliases, merges=merges)
    g = layer.graph
    for pid, facts in facts_by_passage:
        for f in facts:
            s, o = aliases[norm(f["subject"])], aliases[norm(f["object"])]
            layer.facts.append({"subject": s, "predicate": f["predicate"], "object": o,
                                "time": f.get("time", ""), "passage": pid})
            for a, b in ((ent(s), ent(o)), (ent(s), pas(pid)), (ent(o), pas(pid))):
                if a == b:
                    continue
                w = g.edges[a, b]["weight"] + 1.0 if g.has_edge(a, b) else 1.0
                g.add_edge(a, b, weight=w)
    layer.names = sorted({v for v in aliases.values()})
    if layer.names:
        layer.name_vectors = await embedder.embed(layer.names, "document")
    return layer


def question_seeds(layer: GraphLayer, question: str, qvec: np.ndarray | None, *, top_k: int = 5,
                   threshold: float = 0.5) -> dict[str, float]:
    """Entity nodes the question names (string match on any variant, weight 1) or resembles
    (embedding similarity >= threshold, top_k names, weight = similarity)."""
    q = f" {norm(question)} "
    seeds: dict[str, float] = {}
    for variant, canon in layer.aliases.items():
        if len(variant) >= 3 and f" {variant} " in q and layer.graph.has_node(ent(canon)):
            seeds[ent(canon)] = 1.0
    if qvec is not None and layer.name_vectors is not None:
        sims = layer.name_vectors @ qvec
        for i in np.argsort(-sims)[:top_k]:
            node = ent(layer.names[int(i)])
            if sims[int(i)] >= threshold and layer.graph.has_node(node):
                seeds[node] = max(seeds.get(node, 0.0), float(sims[int(i)]))
    return seeds


def personalised_pagerank(graph: nx.Graph, seeds: dict[str, float], damping: float = 0.5) -> dict[str, float]:
    """networkx's PageRank with the restart distribution on the seeds ({} when nothing seeds it)."""
    if not seeds or graph.number_of_nodes() == 0:
        return {}
    try:
        return nx.pagerank(graph, alpha=damping, personalization=seeds, weight="weight")
    except nx.PowerIterationFailedConvergence:  # rare at damping <= 0.85; the other rankers still stand
        return {}


def passage_scores(pr: dict[str, float]) -> dict[str, float]:
    return {n[2:]: s for n, s in pr.items() if n.startswith("p:")}


def top_facts(layer: GraphLayer, pr: dict[str, float], passages: set[str], n: int,
              order: dict[str, int]) -> list[dict[str, Any]]:
    """Facts from the context's passages (the cap bounds facts too), by the PageRank of their
    two entities, then corpus order; duplicates once."""
    def score(f: dict[str, Any]) -> float:
        return pr.get(ent(f["subject"]), 0.0) + pr.get(ent(f["object"]), 0.0)

    cands = [f for f in layer.facts if f["passage"] in passages]
    seen: set[tuple[str, str, str]] = set()
    out = []
    for f in sorted(cands, key=lambda f: (-score(f), order.get(f["passage"], 0))):
        k = (f["subject"], f["predicate"].lower(), f["object"])
        if k not in seen:
            seen.add(k)
            out.append({**f, "score": round(score(f), 6)})
        if len(out) >= n:
            break
    return out
