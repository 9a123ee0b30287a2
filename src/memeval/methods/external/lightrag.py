"""LightRAG hybrid mode (lightrag-hku 1.5.7) with the GSW paper's settings (Table 9)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memeval.methods.base import IndexCounters, Services

from .base import ExternalMethod
from .counters import LIGHTRAG_EXAMPLES, lightrag_counters


class LightRAGMethod(ExternalMethod):
    """Chapters inserted as documents; the hybrid-mode context (only_need_context) per question.
    Document chunks are capped to `cap` chapters (workers/lightrag_worker.py)."""

    env_name = "lightrag"
    # its package's extraction prompt examples (methods/external/counters.py), for the phrase-copy health check
    prompt_examples = LIGHTRAG_EXAMPLES
    section_header = (r"(?m)^(?P<name>Knowledge Graph Data \((?:Entity|Relationship)\)|Document Chunks"
                      r"|Reference Document List)")
    capped_sections = ("Document Chunks", "Reference Document List")  # entities, relations are not

    # lightrag-hku 1.5.7 prompt.py PROMPTS["fail_response"]: what only_need_context returns when
    # the keyword search finds no entity, relation or chunk (21 of 40 bundled EpBench contexts)
    no_context_markers = ("Sorry, I'm not able to provide an answer to that question.[no-context]",)
    # the package's context template: its section headers and their example heading path
    # and the JSON keys its entity, relation and chunk lines are written with
    context_labels = ("Knowledge Graph Data", "Document Chunks", "Reference Document List",
                      "Section 1 → Subsection 1.2", '"reference_id"', '"content"', '"entity1"', '"entity2"',
                      '"entity"', '"type"', '"description"', '"created_at"', '"file_path"', "\\n")

    def __init__(self, services: Services, name: str | None = None, mode: str = "hybrid",
                 chunk_token_size: int = 1200, chunk_overlap_token_size: int = 100,
                 top_k: int | None = None, chunk_top_k: int | None = None,
                 max_total_tokens: int | None = None, llm_max_async: int = 4, **kw: Any):
        super().__init__(services, name, **kw)
        self._settings: dict[str, Any] = {
            "mode": mode, "chunk_token_size": chunk_token_size,
            "chunk_overlap_token_size": chunk_overlap_token_size, "llm_max_async": llm_max_async}
        # None = the package's own default (read from lightrag.constants, never from the environment)
        for key, value in (("top_k", top_k), ("chunk_top_k", chunk_top_k), ("max_total_tokens", max_total_tokens)):
            if value is not None:
                self._settings[key] = value

    @classmethod
    def index_counters(cls, folder: Path) -> IndexCounters | None:
        return lightrag_counters(folder)

    def settings(self) -> dict[str, Any]:
        return dict(self._settings)
