"""cognee (1.6.5) with its embedded stores (SQLite, LanceDB, the Ladybug graph).

Each session (LoCoMo, LongMemEval) or chapter (EpBench) is added and cognified in order, as a
document named by its unit id that opens with its heading and date; per question the package's
default search (HYBRID_COMPLETION, `only_context`) gives its passages, entity neighbourhoods and
facts, with passages from at most `cap` sessions (workers/cognee_worker.py). The harness answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memeval.datasets.types import Corpus
from memeval.methods.base import IndexCounters, Services
from memeval.settings_history import Introduced

from .base import ExternalMethod
from .cost_model import CostModel, IndexCall
from .counters import episodes_of, per_episode, structured_calls
from .envs import EnvSpec
from .episodes import date_rule, dated_payload

SEARCH_TYPES = ("HYBRID_COMPLETION", "GRAPH_COMPLETION", "RAG_COMPLETION", "CHUNKS")


def cognee_counters(folder: Path) -> IndexCounters | None:
    """Units: the sessions (chapters) cognified; structures: graph edges and entities extracted
    from each, from the worker's per-session record. cognee's prompts hold no example entities
    from the benchmarks (its graph prompt's examples are Alice, Acme, Marie Curie, World War I)."""
    episodes = episodes_of(folder)
    if not episodes:
        return None
    return IndexCounters(
        **per_episode(episodes, "edges"),
        extra={"structured_calls": structured_calls(
            [{**e, "chat_attempts": e.get("structured_calls", 0)} for e in episodes]),
               "edges_per_unit": [int(e.get("facts", 0)) for e in episodes]})


class CogneeMethod(ExternalMethod):
    """Sessions cognified one at a time; cognee's hybrid context per question."""

    # cognee with its embedded SQLite, LanceDB and Ladybug (Kuzu fork) stores; locks/cognee.in
    env_spec = EnvSpec("cognee", "cognee.txt", worker="cognee_worker.py", probe="cognee", hashed=True,
                       build_cost=("1.6 GB", "several minutes"))
    # cognee 1.6.5, per session (one chunk each on LoCoMo; longer units split), measured with the
    # scripted server on LoCoMo conv-30 (19 sessions, 39 calls: one graph extraction and one summary
    # per chunk, one connection test per process); replies are guesses. uncapped_tokens: its graph
    # nodes and facts, which it reports as outside the cap: measured on EpBench-20 at 1.5B
    # (2026-12-04), a median context of 2,818 tokens where its 3 chapters hold about 1,650.
    cost_model = CostModel(calls=(
        IndexCall("extract_content_graph", 1, 990, 700),
        IndexCall("summarize_text", 1, 210, 200),
    ), context_tokens=3400, embed_per_chunk=5 * 170, uncapped_tokens=1200)
    # the graph prompt's example entities (cognee_counters' docstring), for the phrase-copy health check
    prompt_examples = ("Alice", "Acme", "Marie Curie", "World War I")
    # settings added after runs were saved without them (upgrade layer); issue 28: an undated unit
    # (a chapter) takes the date its text writes, saved runs gave every undated unit a synthetic day
    settings_history = (Introduced("episode_dates", "synthetic", until_format=None, hashed_as_absent=True),)
    section_header = r"(?m)^## (?P<name>[^\n]+)$"
    # the context's section headers and the package's edge wording ("Document chunk mentions jon: ...")
    context_labels = ("Relevant passages", "Relevant entities", "Relevant facts", "Document chunk mentions",
                      "Document")
    capped_sections = ("Relevant passages",)  # entities and facts come from the graph, not one session

    def __init__(self, services: Services, name: str | None = None, search_type: str = "HYBRID_COMPLETION",
                 top_k: int = 15, max_tokens: int | None = None, on_session_error: str = "record",
                 episode_dates: str = "text", **kw: Any):
        super().__init__(services, name, **kw)
        if self.answer_with != "shared":
            raise ValueError("cognee is answered by the harness's shared prompt here: answer_with must be 'shared'")
        if search_type not in SEARCH_TYPES:
            raise ValueError(f"search_type must be one of {SEARCH_TYPES}, not {search_type!r}")
        if on_session_error not in {"record", "fail"}:
            raise ValueError("on_session_error must be 'record' (count it, go on) or 'fail' (stop the index)")
        self.episode_dates = date_rule(episode_dates)
        self._settings: dict[str, Any] = {"search_type": search_type, "top_k": top_k,
                                          "on_session_error": on_session_error, "episode_dates": episode_dates}
        # None = the package default (cognee sends no max_tokens: the proxy's llm.max_tokens applies)
        for key, value in (("max_tokens", max_tokens),):
            if value is not None:
                self._settings[key] = value

    def settings(self) -> dict[str, Any]:
        return dict(self._settings)

    def worker_env_extra(self) -> dict[str, str]:
        # KUZU_NUM_THREADS=1: one thread per graph query, so an entity's edges come back in one
        # order. With Kuzu's default (a thread per core) two retrieval passes over one index gave
        # 3 of EpBench-20's 200 contexts with edges in another order (2026-12-05), and the run did
        # not replay; graphiti's worker makes the same choice for the same reason.
        return {"TELEMETRY_DISABLED": "1", "KUZU_NUM_THREADS": "1"}

    def units_for_worker(self, corpus: Corpus) -> list[dict[str, Any]]:
        return dated_payload(corpus, self.episode_dates)

    @classmethod
    def index_counters(cls, folder: Path) -> IndexCounters | None:
        return cognee_counters(folder)
