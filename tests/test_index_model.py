"""An indexing model of its own (`llm_index=`): built like the answering model, every method's
index-time calls go to it (the baseline packages' through the proxy, by stage), query-time calls
to the answering model; meta, index identity, usage and the table name it; the default (the
answering model) keeps every run and index folder name."""

from __future__ import annotations

import asyncio
import contextvars
import json
import subprocess
import sys

import openai
from conftest import ROOT, run_cli, scripted_overrides
from omegaconf import OmegaConf

from memeval.evaluation.runs.folder import config_hash
from memeval.harness.build import identity, own_index_model
from memeval.harness.estimate import compose
from memeval.methods.external.proxy import ModelProxy
from memeval.model_access.cache import ResponseCache
from memeval.model_access.chat import ChatModel
from memeval.model_access.embed import OpenAICompatibleEmbedder
from memeval.model_access.usage import UsageLedger, stage


def test_the_default_indexer_is_the_answering_model_and_keeps_folder_names() -> None:
    cfg = compose(["method=gsw", "data_dir=data"])
    assert OmegaConf.to_container(cfg.llm_index, resolve=True) == OmegaConf.to_container(cfg.llm, resolve=True)
    assert not own_index_model(cfg)
    saved = OmegaConf.create(OmegaConf.to_container(cfg, resolve=True))
    del saved["llm_index"], saved["experiment"]  # a config saved before either existed
    assert config_hash(identity(cfg)) == config_hash(identity(saved))
    other = compose(["method=gsw", "data_dir=data", "llm_index=local"])  # 1.5B indexes, 0.5B answers
    assert own_index_model(other) and config_hash(identity(other)) != config_hash(identity(cfg))
    assert other.llm_index.model == "qwen2.5-coder-1.5b-instruct" and other.llm.model == "qwen2.5-coder-0.5b-instruct"


def test_paper_experiment_shows_the_gpt_4o_mini_indexer_for_hipporag2() -> None:
    r = subprocess.run([sys.executable, "run.py", "+experiment=paper", "method=hipporag2", "dataset=epbench200",
                        "--cfg", "job"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    cfg = OmegaConf.create(r.stdout)
    assert cfg.llm_index.model == "gpt-4o-mini-2024-07-18" and cfg.llm.model == "gpt-4o-2024-08-06"
    assert OmegaConf.to_container(cfg.llm_index)["model"] != OmegaConf.to_container(cfg.llm)["model"]


def test_proxy_sends_index_time_calls_to_the_indexing_model(scripted, tmp_path) -> None:
    cache, ledger = ResponseCache(tmp_path / "c.sqlite"), UsageLedger()
    answer = ChatModel("scripted-answerer", base_url=scripted.base_url, api_key_env=None, cache=cache, ledger=ledger)
    indexer = ChatModel("scripted-indexer", base_url=scripted.base_url, api_key_env=None, cache=cache, ledger=ledger)
    emb = OpenAICompatibleEmbedder("hashed", base_url=scripted.base_url, api_key_env=None, cache=cache, ledger=ledger)
    proxy = ModelProxy(answer, emb, index_chat=indexer)
    client = openai.OpenAI(base_url=proxy.start(), api_key="x", max_retries=0)

    async def job(name: str, text: str) -> None:
        with stage(name):
            proxy.context = contextvars.copy_context()
            await asyncio.to_thread(lambda: client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": text}]))
            proxy.context = None

    try:
        asyncio.run(job("index", "Extract the entities of this chunk."))
        asyncio.run(job("retrieve", "Extract the entities of this question."))
        asyncio.run(job("answer", "Answer from these passages."))
    finally:
        proxy.close()
    models = [r["body"]["model"] for r in scripted.requests if r["path"] == "/v1/chat/completions"]
    assert models == ["scripted-indexer", "scripted-answerer", "scripted-answerer"]
    by_model = ledger.summary()["stages"]
    assert set(by_model["index"]["by_model"]) == {"scripted-indexer"}  # its own usage line
    assert set(by_model["answer"]["by_model"]) == {"scripted-answerer"}


def test_a_run_indexes_with_its_own_model_and_names_it(scripted, tmp_path, data_dir, capsys) -> None:
    """GSW on one chapter: every index-time request goes to the indexing model, the question's
    NER and the answer to the answering model; meta, usage, the index folder and results.md say so."""
    url = scripted.base_url
    args = ["method=gsw", "dataset=epbench20", "subset.n=2", "subset.within_units=1", "method.max_chapters=1",
            *scripted_overrides(scripted, tmp_path, data_dir),
            "llm_index=openai_compatible", f"llm_index.base_url={url}", "llm_index.model=scripted-indexer"]
    r = run_cli(args)
    assert r.returncode == 0, r.stderr[-3000:]
    (run,) = sorted((tmp_path / "runs" / "epbench20").glob("gsw-*"))
    meta = json.loads((run / "meta.json").read_text())
    assert meta["index_model"] == "scripted-indexer" and meta["answer_model"] == "scripted-llm"
    assert meta["experiment"] == {"name": "fair"}  # the default: no reference, no deviations
    usage = json.loads((run / "usage.json").read_text())["stages"]
    assert "scripted-indexer" in usage["index"]["by_model"] and "scripted-llm" not in usage["index"]["by_model"]
    assert set(usage["answer"]["by_model"]) == {"scripted-llm"}
    assert "scripted-llm" in usage["retrieve"]["by_model"]  # the question's NER: a query-time call
    chats = [r["body"] for r in scripted.requests if r["path"] == "/v1/chat/completions"]
    operator = [b for b in chats if "[GSW:operator]" in json.dumps(b["messages"])]
    assert operator and {b["model"] for b in operator} == {"scripted-indexer"}
    assert "indexing model: **scripted-indexer**" in (run / "results.md").read_text()
    from memeval.evaluation.compare import main as compare

    capsys.readouterr()
    assert compare([str(run)]) == 0  # the comparison names which run indexed with which model
    assert "- indexing model: gsw scripted-indexer" in capsys.readouterr().out
    index = json.loads((run / "index.json").read_text())
    # the same run indexed by the answering model would share no index folder with this one
    args_same = [a for a in args if not a.startswith("llm_index")]
    assert run_cli(args_same).returncode == 0
    folders = {json.loads(p.read_text())["index_folder"] for p in (tmp_path / "runs" / "epbench20").glob("gsw-*/index.json")}
    assert index["index_folder"] in folders and len(folders) == 2
