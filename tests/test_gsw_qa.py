"""GSW's QA side (issue 11): generous matching, the top-k summary cut that separates `gsw` from
`gsw_string_norerank`, and failures recorded where they happen (question NER, summaries)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from scripted_server import ScriptedServer
from test_gsw_reconciler import FakeEmbedder, chunk, run

from memeval.datasets.types import ContextCap, Corpus, Question, Unit
from memeval.methods.base import Services
from memeval.methods.gsw.method import GSW, GSWIndex
from memeval.methods.gsw.qa import NameMatcher, entries_from, select
from memeval.methods.gsw.reconciler import Reconciler
from memeval.methods.gsw.summaries import summarise
from memeval.methods.gsw.workspace import Workspace
from memeval.model_access.cache import ResponseCache
from memeval.model_access.chat import ChatModel, ChatResult
from memeval.model_access.embed import OpenAICompatibleEmbedder
from memeval.model_access.errors import JsonOutputError, ModelCallError

ROOT = Path(__file__).resolve().parents[1]
FIRST = ["Ava", "Bo", "Cal", "Dee", "Eli", "Fay", "Gus", "Hal", "Ivy", "Jon", "Kit", "Lou", "Max", "Ned", "Oli",
         "Pia", "Quin", "Rex", "Sal", "Tia", "Uma", "Vic", "Wes", "Xia", "Yul"]


def test_matching_is_generous_both_ways_and_by_shared_name_words() -> None:
    m = NameMatcher()
    m.add(0, ["Ava Stone"])
    m.add(1, ["the Stone family reunion"])
    m.add(2, ["Mr. Stone"])
    m.add(3, ["Stoneware Gallery"])
    m.add(4, ["March 3, 2026"])
    m.add(5, ["Ava"])
    assert m.match("Ava Stone") == {0, 1, 2, 5}  # contains, contained, shared words; not Stoneware
    assert m.match("Stone") == {0, 1, 2}
    assert m.match("reunion of the Stone family at the pier") == {0, 1, 2}
    assert m.match("March 3, 2026") == {4} and m.match("March 9, 2026") == set()  # months, numbers: no names


def test_select_cuts_after_ranking() -> None:
    class E:
        def __init__(self, ch: str):
            self.chapter = ch

    entries: Any = [E(str(i % 3)) for i in range(30)]
    assert select(list(range(30)), entries, cap=2, max_entries=17) == [i for i in range(30) if i % 3 != 2][:17]
    assert len(select(list(range(30)), entries, cap=2, max_entries=None)) == 20


def _crowd_corpus() -> Corpus:
    crowd = " ".join(f"{f} Stone waved at the boats." for f in FIRST)
    texts = [f"At Central Park, the Stone family gathered on March 23, 2025. {crowd}",
             "Ava Stone walked home alone along the river on March 24, 2025."]
    return Corpus("crowd", tuple(Unit(str(i + 1), t, i, title=f"Chapter {i + 1}") for i, t in enumerate(texts)))


def test_gsw_and_string_norerank_send_different_contexts(tmp_path: Path) -> None:
    """Generous matching finds every Stone for "Ava Stone"; `gsw` reranks and keeps the top 17
    summaries, `gsw_string_norerank` sends every match in story order (as the paper's ablation,
    which used about twice the tokens)."""
    from hydra import compose, initialize_config_dir
    from hydra.utils import instantiate

    from memeval.harness.resolvers import register_resolvers
    from memeval.harness.schema import register_schemas

    register_resolvers()
    register_schemas()
    q = Question("q1", "crowd", "Where did Ava Stone go on March 23, 2025?", ("Central Park",))
    out: dict[str, Any] = {}
    with ScriptedServer() as server:
        cache = ResponseCache(None)
        llm = ChatModel("scripted", base_url=server.base_url, api_key_env=None, cache=cache)
        emb = OpenAICompatibleEmbedder("hashed", base_url=server.base_url, api_key_env=None, cache=cache)
        for variant in ("gsw", "gsw_string_norerank"):
            with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
                cfg = compose(config_name="config", overrides=[f"method={variant}"])
            services = Services(llm=llm, embedder=emb, cap=ContextCap(max_units=3), store_root=tmp_path / variant)
            method = instantiate(cfg.method, _partial_=True)(services=services)

            async def go(method: Any = method) -> Any:
                return await method.retrieve(await method.build_index(_crowd_corpus()), q)

            out[variant] = asyncio.run(go())
    full, plain = out["gsw"], out["gsw_string_norerank"]
    assert full.extras["candidates"] == plain.extras["candidates"] > 17
    assert len(full.extras["chosen"]) == 17 and len(plain.extras["chosen"]) == plain.extras["candidates"]
    assert full.context_text != plain.context_text
    assert len(full.context_text) < len(plain.context_text)
    scores = [c["score"] for c in full.extras["chosen"]]
    assert scores == sorted(scores, reverse=True)


class _FailingNER:
    def __init__(self, exc: Exception):
        self.exc = exc

    async def complete_json(self, messages: list[dict[str, str]], model: Any, max_tokens: int | None = None,
                            stop_repeats: str | None = None):
        raise self.exc


def test_failed_question_ner_is_recorded_in_the_prediction(tmp_path: Path) -> None:
    for exc in (JsonOutputError("no valid QuestionEntities JSON after 3 attempt(s)", ["{"]),
                ModelCallError("endpoint kept failing")):
        services = Services(llm=_FailingNER(exc), embedder=FakeEmbedder(), cap=ContextCap(max_units=3),  # type: ignore[arg-type]
                            store_root=tmp_path)
        method = GSW(services, rerank=False)
        index = GSWIndex(Corpus("c", (Unit("1", "x", 0),)), [], NameMatcher(), {})
        r = asyncio.run(method.retrieve(index, Question("q", "c", "Where did Ava Stone go?", ())))
        assert r.context_text == "" and r.extras["ner_ok"] is False
        assert type(exc).__name__ in r.extras["ner_error"]


class _FlakySummaries:
    async def complete(self, messages: list[dict[str, str]], max_tokens: int | None = None,
                       stop_repeats: str | None = None) -> ChatResult:
        if "Entity: Bo Stone" in messages[-1]["content"]:
            raise ModelCallError("summary endpoint kept failing")
        return ChatResult("A summary.", 1, 1, False, "fake")


def test_failed_summary_fails_that_entry_not_the_index() -> None:
    ws = Workspace(scope="1", chapters=["1"])
    run(Reconciler(ws, forward_falling=False).add(chunk("1.0", [("e1", "Ava Stone", "host", []),
                                                               ("e2", "Bo Stone", "guest", [])])))
    counts = run(summarise(_FlakySummaries(), ws, "1", "Chapter 1"))
    assert counts["summaries_llm"] == 1 and counts["summaries_failed"] == 1
    bo = ws.find("Bo Stone").id
    assert list(ws.meta["summary_failures"]) == [f"1/{bo}"]
    sources = {e.name: e.summary_source for e in entries_from(ws, {"1": 0})}
    assert sources == {"Ava Stone": "llm", "Bo Stone": "summary_failed"}
