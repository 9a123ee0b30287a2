"""HippoRAG 2 (hipporag 2.0.0a4) with the GSW paper's settings (Table 8); passages = chapters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memeval.methods.base import IndexCounters, Services

from .base import ExternalMethod
from .counters import HIPPORAG_EXAMPLES, hipporag2_counters


class HippoRAG2Method(ExternalMethod):
    """OpenIE graph over chapters; `retrieve` gives the passages QA would read, top
    min(qa_top_k, cap) (workers/hipporag2_worker.py)."""

    env_name = "hipporag2"
    # its package's extraction prompt examples (methods/external/counters.py), for the phrase-copy health check
    prompt_examples = HIPPORAG_EXAMPLES

    def __init__(self, services: Services, name: str | None = None, qa_top_k: int = 17,
                 linking_top_k: int = 5, retrieval_top_k: int = 200,
                 max_new_tokens: int | None = None, **kw: Any):
        super().__init__(services, name, **kw)
        self._settings: dict[str, Any] = {"qa_top_k": qa_top_k, "linking_top_k": linking_top_k,
                                          "retrieval_top_k": retrieval_top_k}
        if max_new_tokens is not None:
            self._settings["max_new_tokens"] = max_new_tokens

    @classmethod
    def index_counters(cls, folder: Path) -> IndexCounters | None:
        return hipporag2_counters(folder)

    def settings(self) -> dict[str, Any]:
        return dict(self._settings)
