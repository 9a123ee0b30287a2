"""SEEM's mechanisms one at a time (scripted server for the model calls): fusion verdicts and
provenance union, reciprocal-rank fusion, personalised PageRank against networkx itself, the
cap in Reverse Provenance Expansion, resumable indexing, the viewer, and every config."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import networkx as nx
import pytest
from scripted_server import ScriptedServer

from memeval.datasets.types import ContextCap, Corpus, Question, Unit
from memeval.methods.base import Services
from memeval.methods.seem import render
from memeval.methods.seem.frames import Frame, Passage, split_passages
from memeval.methods.seem.fusion import Fusion, Memory
from memeval.methods.seem.graph import (
    build_graph,
    passage_scores,
    personalised_pagerank,
    question_seeds,
)
from memeval.methods.seem.retrieval import rrf
from memeval.methods.seem.rpe import expand, fit_tokens, render_context, spoken_dates
from memeval.model_access.cache import ResponseCache
from memeval.model_access.chat import ChatModel
from memeval.model_access.embed import OpenAICompatibleEmbedder

ROOT = Path(__file__).resolve().parents[1]

TEXTS = [
    "Mira Tolk rehearsed the Lantern Parade on April 9, 2031 at Harbour Square. Jonas Vell carried the drums.",
    "Otto Brand repaired a bicycle at Mill Road on May 2, 2031.",
    "Jonas Vell described how Mira Tolk led the Lantern Parade on April 9, 2031 at Harbour Square.",
    "Otto Brand sold cakes in Old Town on June 5, 2031. Mira Tolk bought two.",
]


def _corpus() -> Corpus:
    return Corpus("mini", tuple(Unit(str(i + 1), t, i, timestamp=f"2031/0{i + 4}/10")
                                for i, t in enumerate(TEXTS)))


def _clients(server: ScriptedServer) -> tuple[ChatModel, OpenAICompatibleEmbedder]:
    cache = ResponseCache(None)
    return (ChatModel("scripted", base_url=server.base_url, api_key_env=None, cache=cache),
            OpenAICompatibleEmbedder("hashed", base_url=server.base_url, api_key_env=None, cache=cache))


def _frame(fid: str, pid: str, text: str) -> Frame:
    return Frame(fid, text, [], [pid])


def test_fusion_merges_one_event_keeps_different_events_apart_and_unions_provenance() -> None:
    order = {"1": 0, "2": 1, "3": 2}
    with ScriptedServer() as server:
        llm, emb = _clients(server)
        fusion = Fusion(llm, emb, top_k=3, threshold=0.0)  # judge every candidate: the verdict decides
        memory = Memory()

        async def go() -> list[str]:
            return [await fusion.add(memory, f, order) for f in (
                _frame("F1", "3", TEXTS[2]),                     # the parade, told later (passage 3)
                _frame("F2", "2", TEXTS[1]),                     # a different event
                _frame("F3", "1", TEXTS[0]))]                    # the parade itself (passage 1)

        ids = asyncio.run(go())
    assert ids == ["F1", "F2", "F1"]  # the second telling of the parade merged into F1
    assert [f.id for f in memory.frames] == ["F1", "F2"]
    parade = memory.frames[0]
    assert parade.provenance == ["1", "3"]  # union, in corpus order
    assert parade.merged_from == ["F3"]
    assert "Jonas Vell" in parade.text() and "Mira Tolk" in parade.text()
    verdicts = {(d["new"], d["existing"]): (d["level"], d["merged"]) for d in memory.decisions}
    assert verdicts[("F2", "F1")] == ("weak", False)
    assert verdicts[("F3", "F1")] == ("strong", True)
    assert all(d["reason"] and "similarity" in d for d in memory.decisions)
    assert memory.vectors is not None and memory.vectors.shape[0] == 2


def test_fusion_never_merges_a_weak_verdict_even_when_very_similar() -> None:
    with ScriptedServer() as server:
        server.add_rule(r"\[SEEM:fuse-judge\]", lambda m, r: json.dumps({"level": "weak", "reason": "no"}))
        llm, emb = _clients(server)
        memory = Memory()
        fusion = Fusion(llm, emb, top_k=3, threshold=0.0)

        async def go() -> None:
            for f in (_frame("F1", "1", TEXTS[0]), _frame("F2", "3", TEXTS[0])):  # identical text
                await fusion.add(memory, f, {"1": 0, "3": 2})

        asyncio.run(go())
    assert len(memory.frames) == 2 and memory.decisions[0]["similarity"] > 0.99
    assert not memory.decisions[0]["merged"]


def test_rrf_order_on_a_hand_computed_case() -> None:
    # k = 2, ranks from 1. 20: dense r1 = 1/3 = 0.3333; 30: d2 + b2 + p2 = 3/4 = 0.75;
    # 40: d3 + b1 = 1/5 + 1/3 = 0.5333; 10: d4 + p1 = 1/6 + 1/3 = 0.5. Dense alone puts 20 first.
    fused = rrf({"dense": [20, 30, 40, 10], "bm25": [40, 30], "ppr": [10, 30]}, k=2)
    assert [i for i, _ in fused] == [30, 40, 10, 20]
    assert [round(s, 4) for _, s in fused] == [0.75, 0.5333, 0.5, 0.3333]
    # a tie (same score) is broken by the best single rank: 7 (rank 1 somewhere) before 8
    assert [i for i, _ in rrf({"x": [7, 8], "y": [8, 7]}, k=60)] == [7, 8]


def test_personalised_pagerank_matches_networkx_on_an_independently_built_graph() -> None:
    facts = [("1", [{"subject": "Mira Tolk", "predicate": "leads", "object": "Lantern Parade", "time": ""}]),
             ("2", [{"subject": "Otto Brand", "predicate": "repairs", "object": "bicycle", "time": ""}]),
             ("3", [{"subject": "Jonas Vell", "predicate": "drums for", "object": "Lantern Parade", "time": ""},
                    {"subject": "Jonas Vell", "predicate": "knows", "object": "Otto Brand", "time": ""}])]
    with ScriptedServer() as server:
        _, emb = _clients(server)
        layer = asyncio.run(build_graph(emb, facts, merge_threshold=0.99))
    seeds = question_seeds(layer, "What does Mira Tolk lead?", None)
    assert seeds == {"e:Mira Tolk": 1.0}
    ours = passage_scores(personalised_pagerank(layer.graph, seeds, damping=0.5))
    g = nx.Graph()  # the same graph, written out by hand
    for a, b in [("Mira Tolk", "Lantern Parade"), ("Mira Tolk", "p1"), ("Lantern Parade", "p1"),
                 ("Otto Brand", "bicycle"), ("Otto Brand", "p2"), ("bicycle", "p2"),
                 ("Jonas Vell", "Lantern Parade"), ("Jonas Vell", "p3"), ("Lantern Parade", "p3"),
                 ("Jonas Vell", "Otto Brand"), ("Otto Brand", "p3")]:
        g.add_edge(a, b, weight=2.0 if (a, b) == ("Jonas Vell", "p3") else 1.0)
    ref = nx.pagerank(g, alpha=0.5, personalization={"Mira Tolk": 1.0}, weight="weight")
    for pid in ("1", "2", "3"):
        assert ours[pid] == pytest.approx(ref[f"p{pid}"], rel=1e-6)
    assert sorted(ours, key=lambda p: -ours[p]) == ["1", "3", "2"]


def _passages() -> dict[str, Passage]:
    return {str(i + 1): Passage(str(i + 1), str(i + 1), i, f"2031/0{i + 4}/10", t) for i, t in enumerate(TEXTS)}


def test_rpe_obeys_the_unit_cap_and_records_drops() -> None:
    ps = _passages()
    ranked = [Frame("F9", "later", [], ["4", "2"]), Frame("F1", "parade", [], ["1", "3"])]
    exp = expand(ranked, ps, max_units=3)
    assert exp.kept == ["2", "4", "1"]  # highest-ranked frame first, its passages in corpus order
    assert exp.dropped == [{"passage": "3", "unit": "3", "frame": "F1", "reason": "unit_cap"}]
    text = render_context(_corpus(), [ps[p] for p in exp.kept], ranked, [])
    assert text.index("### Session 1 (2031/04/10)") < text.index("### Session 2") < text.index("### Session 4")
    assert "Session 3" not in text and "[F9] from: 4, 2" in text


def test_rpe_token_cap_drops_lowest_ranked_passages_first() -> None:
    ps, corpus = _passages(), _corpus()
    ranked = [Frame("F1", "parade", [], ["1", "3"]), Frame("F2", "bike", [], ["2"])]
    exp = expand(ranked, ps, max_units=None)
    full = render_context(corpus, [ps[p] for p in exp.kept], ranked, [])
    from memeval.model_access.tokenizer import count_tokens

    cap = ContextCap(max_tokens=count_tokens(full) - 1)

    def build(kept: list[str]) -> tuple[str, list, list]:
        return render_context(corpus, [ps[p] for p in kept], ranked, []), ranked, []

    text, _, _ = fit_tokens(cap, exp, build, count_tokens)
    assert count_tokens(text) <= cap.max_tokens
    assert exp.kept == ["1", "3"] and exp.dropped == [{"passage": "2", "frame": "F2", "reason": "token_cap"}]


def test_spoken_dates_rewrite_frames_and_facts_but_never_source_passages() -> None:
    assert spoken_dates("2031-04-09 (last Sunday)") == "9 April 2031 (last Sunday)"
    assert spoken_dates("in 2031-05, then 2031-12-31") == "in May 2031, then 31 December 2031"
    for kept in ("2031-13-01", "2031-04-00", "call 1234-5678", "2031"):  # not calendar dates
        assert spoken_dates(kept) == kept
    p = Passage("1", "1", 0, "2031/04/10", "The memo was dated 2031-04-09.")
    frame = Frame("F1", "Memo signed on 2031-04-09.", [{"action": "signed", "time": "2031-04-09"}], ["1"])
    fact = {"subject": "Mira", "predicate": "signed", "object": "memo", "time": "2031-04", "passage": "1"}
    spoken = render_context(_corpus(), [p], [frame], [fact], frame_dates="spoken")
    passages, derived = spoken.split("## Event frames")
    assert "dated 2031-04-09." in passages and "2031-04" not in derived
    assert "Memo signed on 9 April 2031." in derived and "| April 2031 [1]" in derived
    assert render_context(_corpus(), [p], [frame], [fact]).count("2031-04") == 4  # the default: as extracted


def test_windows_of_turns_become_passages() -> None:
    turns = "\n\n".join(f"A: line {i}" for i in range(7))
    corpus = Corpus("c", (Unit("1", turns, 0, timestamp="d1"), Unit("2", "B: short", 1, timestamp="d2")))
    ps = split_passages(corpus, window_turns=3)
    assert [(p.id, p.unit_id, p.label) for p in ps] == [("1#w1", "1", "turns 1-3"), ("1#w2", "1", "turns 4-6"),
                                                        ("1#w3", "1", "turns 7-7"), ("2", "2", "")]
    assert [p.id for p in split_passages(corpus, None, max_passages=1)] == ["1"]


def _method(variant: str, server: ScriptedServer, store: Path, cap: ContextCap, **over: object) -> object:
    from hydra import compose, initialize_config_dir
    from hydra.utils import instantiate

    from memeval.harness.resolvers import register_resolvers
    from memeval.harness.schema import register_schemas

    register_resolvers()
    register_schemas()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"method={variant}", *(f"method.{k}={v}" for k, v in over.items())])
    assert cfg.method.name == variant
    llm, emb = _clients(server)
    services = Services(llm=llm, embedder=emb, cap=cap, store_root=store)
    return instantiate(cfg.method, _partial_=True)(services=services)


QUESTION = Question("q1", "mini", "When did Mira Tolk lead the Lantern Parade?", ("April 9, 2031",))


@pytest.mark.parametrize("variant", ["seem", "seem_no_fusion", "seem_no_rpe", "seem_no_graph",
                                     "seem_dense_only", "seem_incremental"])
def test_every_config_composes_indexes_and_retrieves(variant: str, tmp_path: Path) -> None:
    with ScriptedServer() as server:
        method = _method(variant, server, tmp_path, ContextCap(max_units=2), fusion_threshold=0.3)

        async def go() -> tuple:
            index = await method.build_index(_corpus())
            return index, await method.retrieve(index, QUESTION)

        index, r = asyncio.run(go())
    assert 0 < len(r.units) <= 2 and r.context_text
    s = index.stats
    assert s["frames_before_fusion"] == 4 and s["passages"] == 4
    assert (tmp_path / "mini" / "memory.json").exists() and len(list((tmp_path / "_passages").glob("*.json"))) == 4
    if variant == "seem_no_fusion":
        assert s["frames_after_fusion"] == 4 and s["fusion"]["judged"] == 0
    else:
        assert s["frames_after_fusion"] == 3 and s["fusion"]["merged"] == 1
    assert ("## Source passages" in r.context_text) == (variant != "seem_no_rpe")
    assert ("## Facts" in r.context_text) == (variant != "seem_no_graph")
    assert ("graph_nodes" in s) == (variant != "seem_no_graph")
    expected = {"seem_no_graph": ["dense", "bm25"], "seem_dense_only": ["dense"]}.get(variant, ["dense", "bm25", "ppr"])
    assert r.extras["retrievers"] == expected
    top = r.extras["retrieved"][0]["frame"]
    if variant == "seem_no_fusion":  # the two tellings of the parade stay two frames
        assert top in {"F1", "F3"} and {"1", "3"} & set(r.extras["expanded_passages"])
    else:
        assert top == "F1" and {"1", "3"} <= set(r.extras["expanded_passages"])
    if variant == "seem_incremental":
        assert (tmp_path / "mini" / "segments" / "4.json").exists()
        assert {d["stage"] for d in index.memory.decisions} >= {"segment3:across"}


def test_index_resumes_per_passage_and_reloads_without_calls(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        method = _method("seem", server, tmp_path, ContextCap(max_units=2), fusion_threshold=0.3)
        asyncio.run(method.build_index(_corpus()))
        frames_calls = sum("[SEEM:frame]" in json.dumps(r["body"]) for r in server.requests)
        assert frames_calls == 4
        n = server.count("/v1/chat/completions")
        again = _method("seem", server, tmp_path, ContextCap(max_units=2), fusion_threshold=0.3)
        index = asyncio.run(again.build_index(_corpus()))  # a fresh client cache: the store answers
        assert server.count("/v1/chat/completions") == n and index.stats["loaded_from_store"]
        # lose the finished memory and one passage: only that passage is extracted again
        (tmp_path / "mini" / "memory.json").unlink()
        sorted((tmp_path / "_passages").glob("*.json"))[0].unlink()
        before = len(server.requests)
        third = _method("seem", server, tmp_path, ContextCap(max_units=2), fusion_threshold=0.3)
        asyncio.run(third.build_index(_corpus()))
        new = [json.dumps(r["body"]) for r in server.requests[before:]]
        assert sum("[SEEM:frame]" in b for b in new) == 1 and sum("[SEEM:facts]" in b for b in new) == 1


def test_viewer_answers_about_an_entity_and_a_query(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with ScriptedServer() as server:
        method = _method("seem", server, tmp_path, ContextCap(max_units=2), fusion_threshold=0.3)
        asyncio.run(method.build_index(_corpus()))
    assert render.main([str(tmp_path), "--entity", "mira tolk", "--query", "bicycle", "--summary"]) == 0
    out = capsys.readouterr().out
    assert "graph nodes: Mira Tolk" in out and "Mira Tolk | with | Lantern Parade" in out
    assert "[F1] from: 1, 3" in out and "(merged)" in out
    assert "# frames for: bicycle\n\n[F2]" in out and '"frames_after_fusion": 3' in out
    assert render.main([str(tmp_path), "--pairs"]) == 0  # the pairs, as the judge read them
    out = capsys.readouterr().out
    assert "## F3 -> F1 (batch): strong, merged" in out and "reader: one event?  [ ] yes  [ ] no" in out
    assert "A (in memory):\nMira Tolk, Lantern Parade, Harbour Square in this passage: Mira Tolk" in out and '"same_event": "yes"' in out
    assert "vetoed (dates)" in out and "vetoed before the judge" in out


def test_text_keyed_extraction_is_shared_across_haystacks_with_different_dates(tmp_path: Path) -> None:
    a = Corpus("hay-a", (Unit("s1", TEXTS[0], 0, timestamp="2031/04/10"), Unit("s2", TEXTS[1], 1, timestamp="2031/05/01")))
    b = Corpus("hay-b", (Unit("s1", TEXTS[0], 0, timestamp="2032/01/01"), Unit("s9", TEXTS[3], 1, timestamp="2032/02/01")))
    with ScriptedServer() as server:
        method = _method("seem", server, tmp_path, ContextCap(max_units=2), extraction_key="text")

        async def go() -> None:
            await method.build_index(a)
            await method.build_index(b)

        asyncio.run(go())
        asked = [json.dumps(r["body"]) for r in server.requests if "[SEEM:frame]" in json.dumps(r["body"])]
    assert len(asked) == 3  # the shared session once, not twice
    assert all("Passage date: unknown" in x for x in asked)
    assert len(list((tmp_path / "_passages").glob("t*.json"))) == 3


def test_a_guard_change_gives_the_index_a_new_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: a stored SEEM index built before a guard change was reused, while a bundle
    replay rebuilt it with the new guard and disagreed with the stored run. The guard version is
    part of the index-defining settings, so the two can no longer share a folder."""
    import memeval.methods.seem.method as seem_method
    from memeval.evaluation.runs.folder import config_hash

    with ScriptedServer() as server:
        before = config_hash(_method("seem", server, tmp_path, ContextCap(max_units=3)).params())
        monkeypatch.setattr(seem_method, "GUARD_VERSION", "seem-guard-test")
        after = config_hash(_method("seem", server, tmp_path, ContextCap(max_units=3)).params())
    assert before != after


@pytest.mark.parametrize("frame_sources", ["any_kept", "all_kept"])
def test_a_fused_frame_beyond_the_cap_is_hidden_only_under_all_kept(frame_sources: str, tmp_path: Path) -> None:
    """The parade frame is fused from passages 1 and 3; a one-session cap keeps only one of them.
    Under any_kept (the first setting) the frame, which speaks for both, still reaches the
    context: the leak the cap audit found. Under all_kept no shown frame names an uncounted unit."""
    with ScriptedServer() as server:
        method = _method("seem", server, tmp_path, ContextCap(max_units=1), fusion_threshold=0.3,
                         frame_sources=frame_sources)

        async def go() -> tuple:
            index = await method.build_index(_corpus())
            return index, await method.retrieve(index, QUESTION)

        index, r = asyncio.run(go())
    fused = next(f for f in index.memory.frames if len(f.provenance) > 1)
    assert r.extras["retrieved"][0]["frame"] == fused.id and len(r.units) == 1
    shown = {f.id: f for f in index.memory.frames if f.id in r.extras["frames_shown"]}
    beyond = {p for f in shown.values() for p in f.provenance} - set(r.units)
    if frame_sources == "any_kept":
        assert fused.id in shown and beyond and "frames_hidden" not in r.extras
    else:
        assert not beyond and fused.id not in shown and fused.id in r.extras["frames_hidden"]
        assert f"[{fused.id}]" not in r.context_text and "## Source passages" in r.context_text
