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
from memeval.settings_history import Introduced

from ..output_guard import ChunkText, copied
from .base import ExternalMethod
from .cost_model import CostModel, IndexCall
from .counters import episodes_of, per_episode, structured_calls
from .envs import EnvSpec
from .episodes import date_rule, dated_payload, is_dialogue

SOURCES = ("auto", "message", "text")
STRUCTURED = ("json_schema", "json_object")


def group_id(corpus_id: str) -> str:
    """The corpus id as Graphiti accepts a group id (ASCII letters, digits, '-' and '_')."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", corpus_id) or "corpus"


# graphiti-core 0.31.2 prompts/extract_nodes.py: the extraction prompts' example entities. Several
# are LoCoMo's own content (Nate's "Gamecube", "red and purple lighting", a "cracked windshield";
# "We won by a tight score" from conv-43), so on LoCoMo a copy can also be a true mention: the
# counter flags only names that the episode's text does not contain (the worker checks).
GRAPHITI_EXAMPLES = ("Jordan", "Denver", "Lockheed Martin", "Belmont Arts Center", "ceramics", "Nisha",
                     "Nisha's dad", "Riverside Park", "Mary", "Trigger", "dog leash", "road cycling", "wool coat",
                     "Nate", "gaming room", "red and purple lighting", "Gamecube", "Ford Mustang", "Mustang",
                     "cracked windshield", "Moen faucet", "Alex", "Dr. Amara Osei", "AAN", "migraine study",
                     "CGRP combination protocol", "Jordan Lee", "Acme Corp", "Jordan's dog", "Jordan's cat")


def graphiti_counters(folder: Path) -> IndexCounters | None:
    """Units: episodes (sessions, chapters); structures: facts (entity edges) and entities per
    episode, from the worker's per-episode record (index_done.json, package/episodes.json)."""
    episodes = episodes_of(folder)
    if not episodes:
        return None
    absent = [str(n) for e in episodes for n in e.get("entities_not_in_text", [])]
    copies = copied(absent, ChunkText(""), GRAPHITI_EXAMPLES)
    return IndexCounters(
        **per_episode(episodes, "facts"),
        example_copies=len(copies), copy_samples=sorted(set(copies))[:5],
        extra={"structured_calls": structured_calls(episodes),
               "facts_per_unit": [int(e.get("facts", 0)) for e in episodes]})


class GraphitiMethod(ExternalMethod):
    """Episodes in time order; `Graphiti.search` facts per question, within the session cap."""

    # graphiti-core with the embedded Kuzu driver (no server); locks/graphiti.in holds the pins
    env_spec = EnvSpec("graphiti", "graphiti.txt", worker="graphiti_worker.py",
                       probe="graphiti_core.driver.kuzu_driver", hashed=True, build_cost=("170 MB", "about a minute"))
    # graphiti-core 0.31.2, per episode (a session), measured with the scripted server on LoCoMo
    # conv-30 (19 sessions, 166 calls): prompt sizes are the measured means, which hold the episode
    # and up to 10 previous ones (so they grow with the conversation at first); dedupe calls per
    # episode depend on the candidates found; replies are guesses.
    cost_model = CostModel(calls=(
        IndexCall("extract_nodes", 1, 7500, 300, False),
        IndexCall("extract_edges", 1, 7200, 800, False),
        IndexCall("dedupe_nodes (0.6 per episode)", 0.6, 7300, 300, False),
        IndexCall("extract_summaries (0.5 per episode)", 0.5, 5500, 600, False),
        IndexCall("dedupe_edges (5.7 per episode)", 5.7, 1100, 30, False),
    ), context_tokens=400, embed_per_chunk=4 * 200)
    # its package's extraction prompt examples (above), for the phrase-copy health check
    prompt_examples = GRAPHITI_EXAMPLES
    # settings added after runs were saved without them (upgrade layer); issue 28: an undated unit
    # (a chapter) takes the date its text writes, saved runs gave every undated unit a synthetic day
    settings_history = (Introduced("episode_dates", "synthetic", until_format=None, hashed_as_absent=True),)
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
