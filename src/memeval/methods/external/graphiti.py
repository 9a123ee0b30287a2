"""Graphiti (graphiti-core 0.31.2, Zep's temporal knowledge-graph engine) on an embedded Kuzu graph.

Each session (LoCoMo, LongMemEval) or chapter (EpBench) is one episode, added in order with its
date (methods/external/episodes.py) into the conversation's own group; per question the package's
hybrid fact search returns the top `num_results` facts with their validity times, capped to the
sessions they came from (workers/graphiti_worker.py). The harness answers from them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from memeval.datasets.types import Corpus
from memeval.methods.base import IndexCounters, Services

from .base import ExternalMethod
from .counters import GRAPHITI_EXAMPLES, graphiti_counters
from .episodes import date_rule, dated_payload, is_dialogue

SOURCES = ("auto", "message", "text")
STRUCTURED = ("json_schema", "json_object")


def group_id(corpus_id: str) -> str:
    """The corpus id as Graphiti accepts a group id (ASCII letters, digits, '-' and '_')."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", corpus_id) or "corpus"


class GraphitiMethod(ExternalMethod):
    """Episodes in time order; `Graphiti.search` facts per question, within the session cap."""

    env_name = "graphiti"
    # its package's extraction prompt examples (methods/external/counters.py), for the phrase-copy health check
    prompt_examples = GRAPHITI_EXAMPLES
    # the worker's context format (workers/graphiti_worker.py _line): its header and each fact's validity
    context_labels = ("Facts from the memory graph (most relevant first), with when each held:",
                      "(valid", " to present)", "unknown to")

    def __init__(self, services: Services, name: str | None = None, num_results: int = 10,
                 episode_source: str = "auto", structured_output: str = "json_schema",
                 max_tokens: int | None = None, temperature: float | None = None, max_coroutines: int = 4,
                 on_episode_error: str = "record", source_description: str = "conversation session",
                 episode_dates: str = "text", **kw: Any):
        super().__init__(services, name, **kw)
        if self.answer_with != "shared":
            raise ValueError("graphiti has no answer prompt of its own: answer_with must be 'shared'")
        if episode_source not in SOURCES:
            raise ValueError(f"episode_source must be one of {SOURCES}, not {episode_source!r}")
        if structured_output not in STRUCTURED:
            raise ValueError(f"structured_output must be one of {STRUCTURED}, not {structured_output!r}")
        if on_episode_error not in {"record", "fail"}:
            raise ValueError("on_episode_error must be 'record' (count it, go on) or 'fail' (stop the index)")
        self.episode_source = episode_source
        self.episode_dates = date_rule(episode_dates)
        self._settings: dict[str, Any] = {
            "num_results": num_results, "episode_source": episode_source,
            "structured_output": structured_output, "max_coroutines": max_coroutines,
            "on_episode_error": on_episode_error, "source_description": source_description,
            "episode_dates": episode_dates}
        # None = the package default (LLMConfig: max_tokens 16384, temperature 1), never the environment
        for key, value in (("max_tokens", max_tokens), ("temperature", temperature)):
            if value is not None:
                self._settings[key] = value

    def settings(self) -> dict[str, Any]:
        return dict(self._settings)

    def reply_ceiling(self) -> int | None:
        """`max_tokens` for every call: graphiti-core 0.31.2 configures its client with it but asks
        16,384 for each edge extraction regardless (edge_operations.extract_edges)."""
        return self._settings.get("max_tokens")

    def params(self) -> dict[str, Any]:
        ceiling = self.reply_ceiling()  # an index built before the ceiling let edge replies run to 16,384
        return {**super().params(), **({"reply_ceiling": ceiling} if ceiling is not None else {})}

    def worker_env_extra(self) -> dict[str, str]:
        return {"GRAPHITI_TELEMETRY_ENABLED": "false"}

    def units_for_worker(self, corpus: Corpus) -> list[dict[str, Any]]:
        source = self.episode_source
        if source == "auto":  # dialogue lines 'Speaker: text' are the package's message format
            source = "message" if is_dialogue(corpus) else "text"
        group = group_id(corpus.id)
        return [{**u, "source": source, "group_id": group} for u in dated_payload(corpus, self.episode_dates)]

    @classmethod
    def index_counters(cls, folder: Path) -> IndexCounters | None:
        return graphiti_counters(folder)
