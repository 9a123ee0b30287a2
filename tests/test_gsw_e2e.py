"""GSW end to end against the scripted server: run.py on a few questions, the saved per-chapter
workspaces, a rerun with zero new requests, resume after lost chapters, and every ablation."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from scripted_server import ScriptedServer  # noqa: E402

from memeval.datasets.types import ContextCap, Corpus, Question, Unit  # noqa: E402
from memeval.methods.base import Services  # noqa: E402
from memeval.methods.gsw.workspace import Workspace  # noqa: E402
from memeval.model_access.cache import ResponseCache  # noqa: E402
from memeval.model_access.chat import ChatModel  # noqa: E402
from memeval.model_access.embed import OpenAICompatibleEmbedder  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


def _data_dir() -> Path:
    for d in (ROOT / "data", DATA):
        if (d / "epbench").exists():
            return d
    pytest.skip("no EpBench data")
    raise AssertionError


def _run(server: ScriptedServer, tmp: Path, cache: str, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "run.py", "method=gsw", "dataset=epbench20",
            "llm=openai_compatible", f"llm.base_url={server.base_url}", "llm.model=scripted",
            "judge=openai_compatible", f"judge.base_url={server.base_url}", "judge.model=scripted",
            "embedder=openai_compatible", f"embedder.base_url={server.base_url}", "embedder.model=hashed",
            "tracking=none", f"data_dir={_data_dir()}", f"output_root={tmp / 'runs'}",
            f"cache_path={tmp / cache}", "subset.n=4", *extra]
    r = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    return r


def _kind_count(server: ScriptedServer, tag: str, since: int = 0) -> int:
    with server.lock:
        reqs = server.requests[since:]
    return sum(1 for r in reqs if tag in json.dumps(r["body"].get("messages", "")))


def test_run_py_gsw_saves_workspaces_and_reruns_free(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        first = _run(server, tmp_path, "cache.sqlite")
        run_dir = Path(first.stdout.split("run folder: ")[1].split()[0])
        n_first = server.count()
        assert _kind_count(server, "[GSW:operator]") > 0 and _kind_count(server, "[GSW:entity-summary]") > 0
        # the shipped config sends summary prompt v2: bounded by the paper's 500 tokens, no sentence cap
        with server.lock:
            summaries = [r["body"] for r in server.requests
                         if "[GSW:entity-summary]" in json.dumps(r["body"].get("messages", ""))]
        assert all(b["max_tokens"] == 500 for b in summaries)
        assert not any("sentences" in b["messages"][0]["content"] for b in summaries)
        index = json.loads((run_dir / "index.json").read_text())
        folder = Path(index["index_folder"]) / "epbench20"
        files = sorted((folder / "chapters").glob("*.json"))
        assert len(files) == 19  # every chapter of the book
        ws = Workspace.from_json(json.loads(files[0].read_text()))
        assert ws.chunks and ws.entities and (folder / "chapters" / f"{ws.scope}.dot").exists()
        assert all(ch.status == "ok" for ch in ws.chunks) and ws.meta["coref"] == "ok"
        stats = json.loads((folder / "index_stats.json").read_text())
        assert stats["chapters"] == 19 and stats["summaries_llm"] == stats["entities"]
        # the index summary reaches index.json: guard drops per chapter (none from this server),
        # predictive questions, forward-falling questions answered later vs still open
        summary = index["corpora"][0]["stats"]
        assert len(summary["guard_by_chapter"]) == 19 and summary.get("guard_entities_dropped", 0) == 0
        assert summary["predictive_questions"] > 0 and summary["ff_answered_later"] > 0 and summary["ff_open"] > 0
        assert stats["ff_answered_later"] == summary["ff_answered_later"]
        preds = [json.loads(x) for x in (run_dir / "predictions.jsonl").read_text().splitlines()]
        assert len(preds) == 4
        for p in preds:
            assert len(p["context_chapters"]) <= 3 and "context_tokens" in p
            assert {"question_entities", "chosen"} <= set(p["retrieval"])
        assert (run_dir / "metrics.json").exists() and (run_dir / "usage.json").exists()

        again = _run(server, tmp_path, "cache.sqlite")
        assert server.count() == n_first  # a rerun makes no request at all
        assert "new model calls this invocation: 0" in again.stdout

        # lose two chapters and the cache: only those two chapters are indexed again
        for f in files[:2]:
            f.unlink()
        before = server.count()
        _run(server, tmp_path, "fresh-cache.sqlite", "stages=[index]")
        assert _kind_count(server, "[GSW:coref]", since=before) == 2
        assert all(f.exists() for f in files)


def _mini_corpus() -> Corpus:
    texts = [
        "At Central Park, Ava Stone led the Astronomy Night on March 23, 2025. Ben Cole carried the telescope. "
        "The crowd cheered. Ava Stone pointed at Jupiter. Ben Cole took notes.",
        "Ben Cole opened the Tech Hackathon at Woolworth Building on May 11, 2026. Cy Dale wrote code all night. "
        "The judges arrived late. Ben Cole announced the winners.",
        "Cy Dale visited Ellis Island. The ferry was crowded. Cy Dale met Ava Stone there on June 02, 2026.",
    ]
    return Corpus("mini", tuple(Unit(str(i + 1), t, i, title=f"Chapter {i + 1}") for i, t in enumerate(texts)))


@pytest.mark.parametrize("variant", ["gsw", "gsw_no_spacetime", "gsw_verb_phrases", "gsw_string_norerank",
                                     "gsw_emb_norerank", "gsw_ner_emb_norerank", "gsw_global"])
def test_every_config_composes_indexes_and_retrieves(variant: str, tmp_path: Path) -> None:
    from hydra import compose, initialize_config_dir
    from hydra.utils import instantiate

    from memeval.harness.resolvers import register_resolvers
    from memeval.harness.schema import register_schemas

    register_resolvers()
    register_schemas()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"method={variant}"])
    assert cfg.method.name == variant
    with ScriptedServer() as server:
        cache = ResponseCache(None)
        llm = ChatModel("scripted", base_url=server.base_url, api_key_env=None, cache=cache)
        emb = OpenAICompatibleEmbedder("hashed", base_url=server.base_url, api_key_env=None, cache=cache)
        services = Services(llm=llm, embedder=emb, cap=ContextCap(max_units=2), store_root=tmp_path)
        method = instantiate(cfg.method, _partial_=True)(services=services)
        corpus = _mini_corpus()
        q = Question("q1", "mini", "Where did Ava Stone go on March 23, 2025?", ("Central Park",))

        async def go() -> tuple:
            index = await method.build_index(corpus)
            return index, await method.retrieve(index, q)

        index, r = asyncio.run(go())
    assert 0 < len(r.units) <= 2 and r.context_text
    stored = tmp_path / "mini"
    if variant == "gsw_global":
        ws = Workspace.from_json(json.loads((stored / "global" / "workspace.json").read_text()))
        assert ws.chapters == ["1", "2", "3"] and ws.find("Ava Stone").chunks[0].startswith("1.")
        assert len(ws.find("Ava Stone").summaries) == 2  # one summary per chapter it appears in
    else:
        ws = Workspace.from_json(json.loads((stored / "chapters" / "1.json").read_text()))
    if variant == "gsw_no_spacetime":
        assert not ws.nodes and "place:" not in r.context_text
    else:
        assert ws.nodes
    if variant == "gsw_verb_phrases":
        assert "who:" in r.context_text
    if variant in {"gsw", "gsw_string_norerank"}:
        assert r.extras["question_entities"] == ["Ava Stone", "March 23, 2025"]
        assert r.units[0] == "1"
    assert index.stats.get("operator_failed", 0) == 0
