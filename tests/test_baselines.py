"""GraphRAG, LightRAG and HippoRAG 2 through their official packages, against the scripted server.

The end-to-end tests need each package's environment (`python scripts/setup_baselines.py all`)
and are skipped with that instruction when it is missing, so the fast suite runs without them.
The protocol and proxy tests need no package environment.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path

import openai
import pytest
from conftest import run_cli, scripted_overrides

from memeval.methods.external import envs
from memeval.methods.external.proxy import ModelProxy
from memeval.methods.external.worker_protocol import WorkerClient, WorkerError
from memeval.model_access.cache import ResponseCache
from memeval.model_access.chat import ChatModel
from memeval.model_access.embed import OpenAICompatibleEmbedder
from memeval.model_access.usage import UsageLedger, collect_calls, stage

WORKERS = Path(envs.__file__).parent / "workers"


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


@pytest.mark.parametrize("method", ["graphrag", "lightrag", "hipporag2"])
def test_baseline_end_to_end_with_scripted_server(method, scripted, tmp_path, data_dir) -> None:
    if envs.find_env(method) is None:
        pytest.skip(f"{method} environment not set up: python scripts/setup_baselines.py {method}")
    args = [f"method={method}", "dataset=epbench20", "subset.n=3", "method.setup=require",
            *scripted_overrides(scripted, tmp_path, data_dir)]
    first = run_cli(args, timeout=1200)
    assert first.returncode == 0, first.stderr[-4000:]
    (run,) = sorted((tmp_path / "runs" / "epbench20").glob(f"{method}-*"))
    preds = _lines(run / "predictions.jsonl")
    assert len(preds) == 3
    for p in preds:
        assert p["context_text"].strip() and p["context_tokens"] > 0
        assert 1 <= len(p["context_chapters"]) <= 3, p["context_chapters"]  # EpBench-20 cap: 3
        assert p["retrieval"]["package"] == method
        assert p["usage"]["retrieve"]["calls"] >= 1, "the package's query-time calls go through the proxy"
        assert p["cap_audit"]["uncapped_tokens"] is not None, "the package's uncapped sections are declared"
        assert isinstance(p["retrieval"]["sampling_requested"], list)
    usage = json.loads((run / "usage.json").read_text())
    assert usage["stages"]["index"]["fresh"]["calls"] > 0, "the package's indexing calls are accounted"
    assert "cap audit: uncapped context share" in (run / "results.md").read_text()
    if method == "graphrag":  # each text unit starts with its chapter's title (unit_titles)
        sources = [p["context_text"].split("-----Sources-----", 1)[-1] for p in preds]
        assert all("title: " in s for s in sources), sources[0][:500]
    index = json.loads((run / "index.json").read_text())
    assert Path(index["index_folder"], "epbench20", "index_done.json").exists()
    store = Path(index["index_folder"], "epbench20")
    assert any((store / "package").iterdir()), "the package's index files are in package/"
    assert not list((store / "cwd").rglob("*.json")), "nothing written relative to the worker's cwd"

    calls = scripted.count()
    second = run_cli(args, timeout=1200)
    assert second.returncode == 0, second.stderr[-4000:]
    assert scripted.count() == calls, ("rerun: the index is reused and every call is cached; new: "
                                       + json.dumps(scripted.requests[calls:], default=str)[:3000])
    assert "new model calls this invocation: 0" in second.stdout

    native = run_cli([*args, "method.answer_with=package"], timeout=1200)  # the package's own prompt
    assert native.returncode == 0, native.stderr[-4000:]
    (nrun,) = [d for d in (tmp_path / "runs" / "epbench20").glob(f"{method}-*") if d != run]
    for p in _lines(nrun / "predictions.jsonl"):
        assert p["answered_by"] == "method" and p["answer"].strip(), p
        assert p["native_answer"]["answer_with"] == "package" and p["usage"]["answer"]["calls"] >= 1
    assert json.loads((nrun / "meta.json").read_text())["answer_with"] == "package"


# -- no package environment needed --------------------------------------------------------------
def _fake_worker(tmp: Path, body: str) -> WorkerClient:
    script = tmp / "fake_worker.py"
    script.write_text(f"import sys\nsys.path.insert(0, {str(WORKERS)!r})\n" + textwrap.dedent(body))
    return WorkerClient("fake", Path(sys.executable), script, {"PATH": "/usr/bin:/bin"}, cwd=tmp / "cwd",
                        log_path=tmp / "worker.log")


def test_worker_protocol_replies_errors_and_exit(tmp_path) -> None:
    worker = _fake_worker(tmp_path, """
        from _serve import serve
        def echo(p):
            print("noise on stdout must not break the protocol")
            return {"echo": p["x"]}
        def boom(p):
            raise ValueError("bad input " + str(p["x"]))
        async def later(p):
            return {"async": True}
        serve({"echo": echo, "boom": boom, "later": later})
    """)
    try:
        assert worker.call("echo", {"x": 3})["result"] == {"echo": 3}
        with pytest.raises(WorkerError) as err:
            worker.call("boom", {"x": 7})
        assert "ValueError: bad input 7" in str(err.value) and "Traceback" in err.value.worker_traceback
        assert asyncio.run(worker.acall("later"))["result"] == {"async": True}
        assert "noise on stdout" in (tmp_path / "worker.log").read_text()
    finally:
        worker.close()
    assert worker._proc is not None and worker._proc.poll() is not None


def test_worker_that_dies_raises_with_log_tail(tmp_path) -> None:
    worker = _fake_worker(tmp_path, """
        import sys
        print("fatal: cannot load index", file=sys.stderr)
        sys.exit(3)
    """)
    with pytest.raises(WorkerError, match="cannot load index"):
        worker.call("open", {})
    worker.close()


def test_proxy_routes_package_calls_through_framework_cache_and_ledger(scripted, tmp_path) -> None:
    cache, ledger = ResponseCache(tmp_path / "c.sqlite"), UsageLedger()
    chat = ChatModel("scripted", base_url=scripted.base_url, api_key_env=None, cache=cache, ledger=ledger)
    emb = OpenAICompatibleEmbedder("hashed", base_url=scripted.base_url, api_key_env=None, cache=cache,
                                   ledger=ledger)
    proxy = ModelProxy(chat, emb)
    client = openai.OpenAI(base_url=proxy.start(), api_key="x", max_retries=0)

    async def job() -> list[dict]:
        with stage("retrieve"), collect_calls() as calls:
            import contextvars

            proxy.context = contextvars.copy_context()
            await asyncio.to_thread(lambda: [
                client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}]),
                client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}]),
                client.embeddings.create(model="text-embedding-3-small", input=["a b", "c"])])
            proxy.context = None
        return calls

    try:
        calls = asyncio.run(job())
        streamed = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}], stream=True) if c.choices)
    finally:
        proxy.close()
    assert streamed == "scripted reply"
    assert scripted.count("/v1/chat/completions") == 1, "the second identical call is a cache hit"
    assert [c["stage"] for c in calls] == ["retrieve"] * 3 and [c["cached"] for c in calls[:2]] == [False, True]
    summary = ledger.summary()["stages"]["retrieve"]
    assert summary["fresh"]["calls"] == 2 and summary["cached"]["calls"] == 1


def test_configs_carry_the_papers_settings() -> None:
    from omegaconf import OmegaConf

    conf = Path(__file__).resolve().parents[1] / "conf" / "method"
    g = OmegaConf.load(conf / "graphrag.yaml")
    assert (g.max_context_tokens, g.text_unit_prop, g.community_prop, g.top_k_entities,
            g.top_k_relationships) == (12000, 0.5, 0.1, 10, 10)
    h = OmegaConf.load(conf / "hipporag2.yaml")
    assert (h.qa_top_k, h.linking_top_k, h.retrieval_top_k) == (17, 5, 200)
    lr = OmegaConf.load(conf / "lightrag.yaml")
    assert (lr.mode, lr.chunk_token_size, lr.chunk_overlap_token_size) == ("hybrid", 1200, 100)


def test_proxy_forwards_the_packages_sampling_and_records_it(scripted, tmp_path) -> None:
    chat = ChatModel("scripted", base_url=scripted.base_url, api_key_env=None, cache=ResponseCache(None))
    emb = OpenAICompatibleEmbedder("hashed", base_url=scripted.base_url, api_key_env=None)
    proxy = ModelProxy(chat, emb)
    client = openai.OpenAI(base_url=proxy.start(), api_key="x", max_retries=0)
    msg = [{"role": "user", "content": "Name a colour."}]
    try:
        client.chat.completions.create(model="gpt-4o", messages=msg, temperature=0.7, seed=5, stop=["END"], n=2)
        client.chat.completions.create(model="gpt-4o", messages=msg)
        client.chat.completions.create(model="gpt-4o", messages=msg, max_tokens=2048)
        asked = proxy.take_requested()
    finally:
        proxy.close()
    bodies = [r["body"] for r in scripted.requests]
    assert len(bodies) == 3
    first, default, longer = bodies
    assert longer["max_tokens"] == 2048 and longer["temperature"] == 0.0
    assert (first["temperature"], first["seed"], first["stop"], first["n"]) == (0.7, 5, ["END"], 2)
    assert default["temperature"] == 0.0 and not {"seed", "stop", "n"} & set(default)
    counts = {json.dumps(a["requested"], sort_keys=True): a["requests"] for a in asked}
    assert counts[json.dumps({"n": 2, "seed": 5, "stop": ["END"], "temperature": 0.7}, sort_keys=True)] == 1
    assert counts["{}"] == 1 and counts['{"max_tokens": 2048}'] == 1


def test_a_reply_ceiling_bounds_what_the_package_asks_and_the_tally_keeps_its_request(scripted, tmp_path) -> None:
    """graphiti-core asks 16,384 tokens for every edge extraction whatever its client says: a
    method's reply ceiling caps each request at the proxy; a smaller request stands."""
    chat = ChatModel("scripted", base_url=scripted.base_url, api_key_env=None, cache=ResponseCache(None))
    emb = OpenAICompatibleEmbedder("hashed", base_url=scripted.base_url, api_key_env=None)
    proxy = ModelProxy(chat, emb, reply_ceiling=300)
    client = openai.OpenAI(base_url=proxy.start(), api_key="x", max_retries=0)
    try:
        for asked_for in (16384, None, 120):  # a prompt each: the cache would answer a repeat
            msg = [{"role": "user", "content": f"Name a river ({asked_for})."}]
            client.chat.completions.create(model="gpt-4o", messages=msg,
                                           **({"max_tokens": asked_for} if asked_for else {}))
        asked = {json.dumps(a["requested"], sort_keys=True) for a in proxy.take_requested()}
    finally:
        proxy.close()
    assert [r["body"]["max_tokens"] for r in scripted.requests] == [300, 300, 120]
    assert '{"max_tokens": 16384}' in asked


def test_a_packages_looping_json_reply_reaches_it_cut_and_closed(scripted, tmp_path) -> None:
    """method.stop_repeats=json_strings: a summary that loops inside its string (cognee's chunk
    summaries at 1.5B) reaches the package as valid JSON ending before the loop, read from a
    streamed reply that stopped there; the rule keys its calls apart from uncut ones."""
    loop = "The market is a place where bakers can meet and trade their bread with neighbours. "
    looping = json.dumps({"summary": "A winter market in Osk. " + loop * 40, "description": "unreached"})
    scripted.add_rule(r"SUMMARISE", lambda m, r: looping)
    scripted.stream_piece_s = 0.001
    cache = ResponseCache(tmp_path / "c.sqlite")
    chat = ChatModel("scripted", base_url=scripted.base_url, api_key_env=None, cache=cache)
    emb = OpenAICompatibleEmbedder("hashed", base_url=scripted.base_url, api_key_env=None)
    msg = [{"role": "user", "content": "SUMMARISE the chunk as JSON"}]
    replies = []
    for rule in ("json_strings", None):
        proxy = ModelProxy(chat, emb, stop_repeats=rule)
        client = openai.OpenAI(base_url=proxy.start(), api_key="x", max_retries=0)
        try:
            replies.append(client.chat.completions.create(model="gpt-4o", messages=msg).choices[0].message.content)
        finally:
            proxy.close()
    cut, whole = replies
    assert json.loads(cut) == {"summary": "A winter market in Osk. " + loop.strip()}
    assert whole == looping and scripted.count("/v1/chat/completions") == 2  # its own key: paid again
    assert scripted.requests[0]["body"]["stream"] is True
    assert scripted.requests[0]["pieces_sent"] < len(looping.split()) / 4  # the loop was not read to its end


def test_stop_repeats_joins_the_index_identity_only_when_set_and_names_its_rules() -> None:
    from memeval.methods.base import Services
    from memeval.methods.external.cognee import CogneeMethod
    from memeval.model_access.repeat_stop import RULES

    services = Services(llm=None, embedder=None, cap=None, store_root=Path("."))  # type: ignore[arg-type]
    assert "stop_repeats" not in CogneeMethod(services).params()  # saved indexes keep their folders
    assert CogneeMethod(services, stop_repeats="json_strings").params()["stop_repeats"] == RULES["json_strings"]
    with pytest.raises(ValueError, match="json_strings"):
        CogneeMethod(services, stop_repeats="loops")


def test_graphrag_unit_titles_are_on_for_new_indexes_and_absent_from_saved_ones() -> None:
    from omegaconf import OmegaConf

    from memeval.evaluation.runs.upgrade import index_identity_view, upgrade_config
    from memeval.methods.base import Services
    from memeval.methods.external.graphrag import GraphRAGMethod

    GRAPHRAG = "memeval.methods.external.graphrag.GraphRAGMethod"  # the class path a config names
    services = Services(llm=None, embedder=None, cap=None, store_root=Path("."))  # type: ignore[arg-type]
    on, off = GraphRAGMethod(services).params(), GraphRAGMethod(services, unit_titles=False).params()
    assert on["unit_titles"] is True and index_identity_view(GRAPHRAG, on)["unit_titles"] is True
    assert "unit_titles" not in index_identity_view(GRAPHRAG, off)  # saved indexes keep their folder names
    saved = Path(__file__).parent / "fixtures/v1_bundles/locomo-local/runs/locomo/graphrag-87ae735d72/config.yaml"
    cfg = upgrade_config(OmegaConf.load(saved))  # a run made before the setting chunked the text alone
    assert cfg.method.unit_titles is False


def test_graphiti_bounds_every_reply_by_its_max_tokens() -> None:
    from memeval.methods.base import Services
    from memeval.methods.external.graphiti import GraphitiMethod

    services = Services(llm=None, embedder=None, cap=None, store_root=Path("."))  # type: ignore[arg-type]
    bounded, default = GraphitiMethod(services, max_tokens=2048), GraphitiMethod(services)
    assert bounded.reply_ceiling() == 2048 and bounded.params()["reply_ceiling"] == 2048
    assert default.reply_ceiling() is None and "reply_ceiling" not in default.params()
