"""GraphRAG local search (graphrag 3.3.0) with the GSW paper's settings (Table 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memeval.methods.base import IndexCounters, Services

from .base import ExternalMethod
from .counters import GRAPHRAG_EXAMPLES, graphrag_counters


class GraphRAGMethod(ExternalMethod):
    """Standard GraphRAG indexing; the local-search context (entities, relationships, community
    reports, text units) per question. Text units are capped to `cap` chapters (workers/graphrag_worker.py)."""

    env_name = "graphrag"
    # its package's extraction prompt examples (methods/external/counters.py), for the phrase-copy health check
    prompt_examples = GRAPHRAG_EXAMPLES
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
