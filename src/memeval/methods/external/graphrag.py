"""GraphRAG local search (graphrag 3.3.0) with the GSW paper's settings (Table 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memeval.methods.base import IndexCounters, Services
from memeval.settings_history import Introduced

from ..output_guard import ChunkText, name_counts, quoting
from .base import ExternalMethod
from .cost_model import CostModel, IndexCall
from .counters import column, read_parquet, worker_index
from .envs import EnvSpec

# graphrag 3.3.0 prompts/index/extract_graph.py and community_report.py: the invented names of
# their examples. A 0.5B index writes them into a conversation's entities and reports.
GRAPHRAG_EXAMPLES = ("Verdant Oasis Plaza", "Unity March", "Harmony Assembly", "Tribune Spotlight", "Firuzabad",
                     "Samuel Namara", "Quintara", "Aurelia", "TechGlobal", "Vision Holdings", "Meggie Tazbah",
                     "Durke Bataglani", "Tiruzia", "Alhamia Prison", "Krohaara", "Bratinas", "Central Institution",
                     "Verdantis", "Martin Smith")


def graphrag_counters(folder: Path) -> IndexCounters | None:
    """Units: text units. With the output parquet tables: entities and relationships per text
    unit; without them (bundles keep no binary tables) the totals of index_done.json, whose
    shortfall below one per unit is a lower bound on the units without any (`at_least`).
    Communities are counted for the corpus: fewer than two is no community structure."""
    out = folder / "package" / "output"
    counts = worker_index(folder).get("counts", {})
    extra = {"totals": counts}
    if (out / "entities.parquet").exists() and (out / "text_units.parquet").exists():
        units = read_parquet(out / "text_units.parquet")
        ent = read_parquet(out / "entities.parquet")
        rel = read_parquet(out / "relationships.parquet") if (out / "relationships.parquet").exists() else None
        ids = [str(u) for u in units["id"]]

        def touched(table: Any) -> set[str]:
            return set() if table is None else {str(t) for ts in table["text_unit_ids"] for t in list(ts)}

        names = [str(t) for t in ent["title"]]
        n, bad, samples = name_counts(names)
        reports = read_parquet(out / "community_reports.parquet") if (out / "community_reports.parquet").exists() else None
        stored = [v for v in names + column(ent, "description") + column(rel, "description")
                  + column(reports, "full_content") if v.strip()]
        copies = quoting(stored, ChunkText(" ".join(column(units, "text"))), GRAPHRAG_EXAMPLES)
        return IndexCounters(
            units=len(ids), empty={"entities": [sum(1 for i in ids if i not in touched(ent)), len(ids)],
                                   "relationships": [sum(1 for i in ids if i not in touched(rel)), len(ids)]},
            names=n, names_not_noun_phrase=bad, name_samples=samples,
            example_copies=len(copies), copy_samples=sorted(set(copies))[:5], values=len(stored), extra=extra)
    if not counts.get("text_units"):
        return None
    n_units = int(counts["text_units"])
    empty = {k: [max(0, n_units - int(counts.get(k, 0))), n_units] for k in ("entities", "relationships")}
    return IndexCounters(units=n_units, empty=empty, at_least=sorted(empty), extra=extra)


class GraphRAGMethod(ExternalMethod):
    """Standard GraphRAG indexing; the local-search context (entities, relationships, community
    reports, text units) per question. Text units are capped to `cap` chapters (workers/graphrag_worker.py)."""

    env_spec = EnvSpec("graphrag", "graphrag.txt", worker="graphrag_worker.py", probe="graphrag",
                       build_cost=("1.3 GB", "several minutes"))
    # graphrag 3.3's standard pipeline, per 1,200-token chunk; template sizes are approximate o200k
    # counts of its prompts, replies typical GPT-4o lengths; not validated against a run (+-50%)
    cost_model = CostModel(chunk=(1200, 100), calls=(
        IndexCall("extract_graph", 1, 2300, 800),
        IndexCall("extract_graph gleaning (max_gleanings=1)", 1, 3200, 400),
        IndexCall("summarize_descriptions (~5 merged entities per chunk)", 5, 350, 150, False),
        IndexCall("community_reports (~1 community per chunk over all levels)", 1, 6000, 1500, False),
    ), context_tokens=12000, embed_per_chunk=1200 + 10 * 60)
    # its package's extraction prompt examples (above), for the phrase-copy health check
    prompt_examples = GRAPHRAG_EXAMPLES
    # settings added after runs were saved without them: what their absence meant (upgrade layer);
    # issue 30: text units start with their unit's title (a session's date), saved runs chunked the text alone
    settings_history = (
        Introduced("community_report_max_tokens", None, hashed_as_absent=True),
        Introduced("unit_titles", False, until_format=None, hashed_as_absent=True),
    )
    section_header = r"(?m)^-----(?P<name>[^\n]+?)-----$"
    capped_sections = ("Sources",)  # text units; Reports, Entities, Relationships, Claims are not

    # graphrag 3.3.0 global_search_reduce_system_prompt.NO_DATA_ANSWER (local search's context
    # builder returns "" instead, which counts as empty anyway)
    no_context_markers = ("I am sorry but I am unable to answer this question given the provided data.",)

    def __init__(self, services: Services, name: str | None = None, max_context_tokens: int = 12000,
                 text_unit_prop: float = 0.5, community_prop: float = 0.1, top_k_entities: int = 10,
                 top_k_relationships: int = 10, community_level: int = 2, chunk_size: int = 1200,
                 chunk_overlap: int = 100, response_type: str = "Multiple Paragraphs",
                 concurrent_requests: int = 4, community_report_max_tokens: int | None = 3000,
                 unit_titles: bool = True, **kw: Any):
        super().__init__(services, name, **kw)
        self._settings = {
            "max_context_tokens": max_context_tokens, "text_unit_prop": text_unit_prop,
            "community_prop": community_prop, "top_k_entities": top_k_entities,
            "top_k_relationships": top_k_relationships, "community_level": community_level,
            "chunk_size": chunk_size, "chunk_overlap": chunk_overlap, "response_type": response_type,
            "concurrent_requests": concurrent_requests,
            "community_report_max_tokens": community_report_max_tokens,  # None: the package asks no limit
            # each text unit starts with its unit's title (GraphRAG's own chunking.prepend_metadata):
            # a LoCoMo session's date is in its title only, and without it no context dates a session
            "unit_titles": unit_titles}

    @classmethod
    def index_counters(cls, folder: Path) -> IndexCounters | None:
        return graphrag_counters(folder)

    def settings(self) -> dict[str, Any]:
        return dict(self._settings)
