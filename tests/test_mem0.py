"""mem0 (mem0ai 2.2.1) through its official package: the ingest plan, the cap, the health counters
(no package environment needed), and end to end against the scripted server with the egress guard
on (skipped, with the setup command, when the mem0 environment is missing)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli, scripted_overrides

from memeval.datasets.types import ContextCap, Corpus, Unit
from memeval.methods.base import Services
from memeval.methods.external import envs
from memeval.methods.external.mem0 import WORKER_ENV, Mem0Method, cap_hits, mem0_counters
from memeval.methods.external.mem0_ingest import iso_date, plan_adds

WORKERS = Path(envs.__file__).parent / "workers"
MEM0_PROMPT = "You are a Memory Extractor"

CHAT = Corpus("talk", (
    Unit("1", "Ana Lopez: I moved to the coast last week.\n\nBo: Nice! How is the sea?\n\nAna Lopez: Cold but lovely.",
         0, timestamp="1:56 pm on 8 May, 2023"),
    Unit("2", "Bo: I adopted a grey cat.\n\nAna Lopez: What is her name?", 1, timestamp="9:00 am on 20 May, 2023"),
))
TRANSCRIPT = Corpus("lme", (
    Unit("s1", "user: Which tent should I buy?\n\nassistant: Here are three options.\n\nNote: all are light."
                "\n\nuser: Thanks.", 0, timestamp="2023/05/20 (Sat) 02:21"),
    Unit("s2", "user: I bought the green one.\n\nassistant: Good choice.", 1, timestamp="2023/05/27 (Sat) 10:00"),
))
BOOK = Corpus("book", (Unit("1", "The fair opened on May 07, 2024 in the square.\n\nA juggler arrived.", 0,
                            title="Chapter 1"), Unit("2", "Rain fell all day.", 1, title="Chapter 2")))


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_session_plan_one_add_per_unit_with_its_date_and_speakers() -> None:
    plan = plan_adds(CHAT, "session", None)
    assert plan["views"] == ["memeval"] and plan["speakers"] == ["Ana Lopez", "Bo"]
    assert [a["unit"] for a in plan["adds"]] == ["1", "2"]
    first = plan["adds"][0]
    assert first["observation_date"] == "2023-05-08" and first["timestamp"] == "1:56 pm on 8 May, 2023"
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "user"]  # the first speaker is the user
    assert first["messages"][1]["content"] == "Bo: Nice! How is the sea?"
    assert [m["role"] for m in plan["adds"][1]["messages"]] == ["assistant", "user"]


def test_vendor_plan_each_speakers_view_two_messages_per_add() -> None:
    plan = plan_adds(CHAT, "speaker_views", 2)
    assert plan["views"] == ["Ana_Lopez", "Bo"] and plan["view_labels"]["Ana_Lopez"] == "Ana Lopez"
    by_view = {v: [a for a in plan["adds"] if a["user_id"] == v] for v in plan["views"]}
    assert [len(a["messages"]) for a in by_view["Ana_Lopez"]] == [2, 1, 2]  # unit 1: 3 turns, unit 2: 2
    bo_first = by_view["Bo"][0]["messages"]
    assert [m["role"] for m in bo_first] == ["assistant", "user"]  # Bo's view: Bo is the user


def test_transcripts_keep_roles_and_multi_paragraph_replies() -> None:
    plan = plan_adds(TRANSCRIPT, "session", None)
    assert plan["speakers"] == ["user", "assistant"]
    msgs = plan["adds"][0]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1]["content"] == "Here are three options.\n\nNote: all are light."  # 'Note:' is no speaker
    assert plan["adds"][0]["observation_date"] == "2023-05-20"
    flipped = [a for a in plan_adds(TRANSCRIPT, "speaker_views", 2)["adds"] if a["user_id"] == "assistant"]
    assert flipped[0]["messages"][0]["role"] == "assistant"  # the assistant's own view


def test_chapters_are_narrative_dated_from_their_text() -> None:
    plan = plan_adds(BOOK, "session", None)
    assert plan["speakers"] == [] and plan["views"] == ["memeval"]
    assert [m["role"] for m in plan["adds"][0]["messages"]] == ["user", "user"]
    assert plan["dates"]["1"] == {"observation_date": "2024-05-07", "timestamp": "2024-05-07", "source": "text"}
    assert plan["dates"]["2"]["observation_date"] is None  # undated: the worker says "unknown"
    assert iso_date("4:04 pm on 20 January, 2023") == "2023-01-20" and iso_date("no date here") is None


def _hit(view: str, rank: int, score: float, unit: str, text: str = "a memory") -> dict:
    return {"view": view, "rank": rank, "score": score, "unit": unit, "memory": text, "timestamp": f"day {unit}"}


def test_cap_keeps_whole_units_in_score_order_then_the_token_cap() -> None:
    hits = [_hit("A", 0, 0.9, "3"), _hit("A", 1, 0.8, "1"), _hit("B", 0, 0.85, "2"), _hit("A", 2, 0.7, "3"),
            _hit("B", 1, 0.5, "4")]
    out = cap_hits(hits, 2, None, ["A", "B"], {"A": "Ana", "B": "Bo"})
    assert out["units_before_cap"] == ["3", "2", "1", "4"] and out["units"] == ["3", "2"]
    assert out["dropped_units"] == ["1", "4"] and out["memories_in_context"] == 3
    assert out["context_text"].startswith("Memories of Ana:\nday 3: a memory\nday 3: a memory\n\nMemories of Bo:")
    assert sum(m["in_context"] for m in out["memories"]) == 3
    one = cap_hits([_hit("A", i, 1 - i / 10, str(i), "word " * 40) for i in range(4)], None, 60, ["A"], {})
    assert one["memories_dropped_for_tokens"] == 3 and one["units"] == ["0"]
    assert not one["context_text"].startswith("Memories of")  # one view: plain lines


def test_cap_audit_finds_a_memory_that_copies_another_sessions_text() -> None:
    """mem0's add prompt also shows earlier messages and memories: a memory of session 1 that
    copies session 3's words is text beyond the reported sessions, and the harness's audit says so."""
    from memeval.harness.provenance import CapAudit

    said = ["the lighthouse keeper painted the red door twice before the autumn storms came in from the west",
            "our neighbours planted forty young apple trees along the lane behind the old chapel last spring",
            "my brother finally sold his green van to a baker who drives it to the market every friday"]
    corpus = Corpus("c", tuple(Unit(str(i + 1), f"Ana: {t}", i) for i, t in enumerate(said)))
    hits = [_hit("memeval", 0, 0.9, "1", "Ana said " + said[0]), _hit("memeval", 1, 0.8, "1", "Ana said " + said[2]),
            _hit("memeval", 2, 0.7, "2", "Ana said " + said[1])]
    out = cap_hits(hits, 1, None, ["memeval"], {})
    assert out["units"] == ["1"] and out["dropped_units"] == ["2"]
    audit = CapAudit().check(corpus, out["context_text"], out["units"], {"uncapped_text": []}, 50)
    assert audit["verbatim_units"] == ["1", "3"] and audit["verbatim_beyond_units"] == ["3"]
    assert audit["uncapped_tokens"] == 0


def test_counters_count_memories_per_unit_and_copied_examples(tmp_path) -> None:
    (tmp_path / "package").mkdir()
    dump = {"units": ["1", "2", "3"], "views": ["memeval"], "unit_texts": {"1": "We met Marcus.", "2": "Rain."},
            "memories": [{"unit": "1", "memory": "They met Marcus."}, {"unit": "2", "memory": "Elena got a dog."},
                         {"unit": "2", "memory": "It rained."}]}
    (tmp_path / "package" / "memories.json").write_text(json.dumps(dump))
    c = mem0_counters(tmp_path)
    assert c is not None and c.units == 3 and c.empty == {"memories": [1, 3]}
    assert c.example_copies == 1 and c.copy_samples == ["Elena"] and c.values == 3  # Marcus is in its unit
    assert c.extra["memories_per_unit"] == {"1": 1, "2": 2, "3": 0}
    assert mem0_counters(tmp_path / "missing") is None


def test_memories_that_copy_their_unit_word_for_word_fail_health(tmp_path) -> None:
    """A memory that repeats its unit's sentences counts as a copy; one that restates a fact in
    other words does not, nor one too short to tell. Nearly all copies fail `source_copies`: the
    run's score is then a sentence retriever's, not mem0's extraction (invented text)."""
    from memeval.evaluation.health.index import index_checks
    from memeval.evaluation.runs.health_file import load_thresholds

    text = ("The lanterns along the quay were lit one by one as the ferry from the north came in late. "
            "Tomas waited by the ticket hut with a basket of pears for his aunt.")
    copies = ["The lanterns along the quay were lit one by one as the ferry came in",
              "Tomas waited by the ticket hut with a basket of pears for his aunt."]
    (tmp_path / "package").mkdir()
    dump = {"units": ["1"], "views": ["memeval"], "unit_texts": {"1": text},
            "memories": [{"unit": "1", "memory": m} for m in
                         [*copies, "Tomas brought pears to his aunt at the harbour ferry stop", "Ferry late."]]}
    (tmp_path / "package" / "memories.json").write_text(json.dumps(dump))
    c = mem0_counters(tmp_path)
    assert c is not None and c.extra["source_copies"] == [2, 3]
    checks = {x.name: x for x in index_checks({"extracts": True, "corpora": {"c": c.to_dict()}},
                                              load_thresholds()["index"])}
    assert checks["source_copies"].status == "warn" and "2 of 3" in checks["source_copies"].message
    dump["memories"] = [{"unit": "1", "memory": m} for m in copies]
    (tmp_path / "package" / "memories.json").write_text(json.dumps(dump))
    c = mem0_counters(tmp_path)
    checks = {x.name: x for x in index_checks({"extracts": True, "corpora": {"c": c.to_dict()}},
                                              load_thresholds()["index"])}
    assert checks["source_copies"].status == "fail"


def test_malformed_memory_items_are_left_out_and_the_rest_kept() -> None:
    """drop_malformed_memories, on the shape of a stored 1.5B reply (invented text): an item that
    is not an object is left out and counted; a reply without one, or that does not parse, is
    passed on unchanged (mem0 handles those itself)."""
    import sys

    sys.path.insert(0, str(WORKERS))
    from mem0_worker import drop_malformed_memories

    reply = ('{"memory": [{"id": "0", "text": "Ana moved to the coast", "attributed_to": "user"},\n'
             '  {"id": "1", "text": "Ana swims in cold water" },\n  "attributed_to" ]}')
    fixed, dropped = drop_malformed_memories(reply)
    assert dropped == 1
    assert [m["text"] for m in json.loads(fixed)["memory"]] == ["Ana moved to the coast", "Ana swims in cold water"]
    clean = '{"memory": [{"id": "0", "text": "Ana moved"}, {"id": "1", "text": ""}]}'
    assert drop_malformed_memories(clean) == (clean, 0)
    assert drop_malformed_memories('{"memory": [{"text": "cut at') == ('{"memory": [{"text": "cut at', 0)
    assert drop_malformed_memories("[1, 2]") == ("[1, 2]", 0)


def test_configs_and_settings() -> None:
    from omegaconf import OmegaConf

    conf = Path(__file__).resolve().parents[1] / "conf" / "method"
    base, vendor = OmegaConf.load(conf / "mem0.yaml"), OmegaConf.load(conf / "mem0_vendor.yaml")
    assert (base.ingest, base.messages_per_add, base.top_k) == ("session", None, 20)
    assert (vendor.ingest, vendor.messages_per_add, vendor.top_k) == ("speaker_views", 2, 10)
    services = Services(llm=None, embedder=None, cap=ContextCap(max_units=5), store_root=Path("."))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no answer step"):
        Mem0Method(services, answer_with="package")
    assert Mem0Method(services).settings() == {"ingest": "session", "messages_per_add": None}


# -- with the mem0 environment ----------------------------------------------------------------
def _need_env() -> Path:
    path = envs.find_env("mem0")
    if path is None:
        pytest.skip("mem0 environment not set up: python scripts/setup_baselines.py mem0")
    return path


def _mem0_calls(scripted) -> list[dict]:
    return [r for r in scripted.requests if r["path"].endswith("/chat/completions")
            and MEM0_PROMPT in r["body"]["messages"][0]["content"]]


def test_mem0_end_to_end_locomo_rerun_free_and_no_egress(scripted, tmp_path, data_dir) -> None:
    _need_env()
    args = ["method=mem0", "dataset=locomo", "dataset.loader.conversations=[conv-30]", "subset.n=6",
            "method.setup=require", *scripted_overrides(scripted, tmp_path, data_dir)]
    first = run_cli(args, timeout=1200)
    assert first.returncode == 0, first.stderr[-4000:]
    (run,) = sorted((tmp_path / "runs" / "locomo").glob("mem0-*"))
    index = json.loads((run / "index.json").read_text())
    (corpus,) = index["corpora"]
    info = corpus["info"]
    extract = _mem0_calls(scripted)
    assert len(extract) == info["units"] == 19, "one chat call per add, one add per session"
    assert info["package"]["egress_guard"] is True and info["egress_refused"] == 0
    store = Path(index["index_folder"], "conv-30")
    assert envs.egress_attempts(store / "egress.jsonl") == [], "the worker tried to leave the machine"
    assert (store / "package" / "qdrant").is_dir() and (store / "package" / "history.db").exists()
    body = extract[0]["body"]
    assert body["response_format"] == {"type": "json_object"} and "tools" not in body
    user = body["messages"][1]["content"]
    assert "## Observation Date\n2023-01-20" in user and "## Current Date\n2023-01-20" in user
    preds = _lines(run / "predictions.jsonl")
    assert len(preds) == 6
    for p in preds:
        assert p["context_text"].strip() and 1 <= len(p["context_chapters"]) <= 5  # LoCoMo's cap: 5 sessions
        assert p["usage"]["retrieve"]["calls"] >= 1, "the query's embedding goes through the proxy"
        assert p["retrieval"]["sampling_requested"] == [], "mem0's search makes no chat call"
        audit = p["cap_audit"]
        assert audit["verbatim_units"] and audit["verbatim_beyond_units"] == [] and audit["uncapped_tokens"] == 0
        assert p["retrieval"]["memories_returned"] == 20 and p["retrieval"]["empty_search"] is False
    usage = json.loads((run / "usage.json").read_text())
    assert usage["stages"]["index"]["fresh"]["calls"] > 19, "extraction and embedding calls are accounted"
    health = json.loads((run / "health.json").read_text())
    empty = next(c for c in health["checks"] if c["name"] == "units_empty")
    assert empty["status"] == "ok" and "19 units" in empty["message"]

    calls = scripted.count()
    second = run_cli(args, timeout=1200)
    assert second.returncode == 0, second.stderr[-4000:]
    assert scripted.count() == calls, json.dumps(scripted.requests[calls:], default=str)[:2000]
    assert "new model calls this invocation: 0" in second.stdout

    shutil.rmtree(store)  # a lost index is rebuilt from the cache alone, into the same contexts
    third = run_cli(args, timeout=1200)
    assert third.returncode == 0, third.stderr[-4000:]
    assert scripted.count() == calls, json.dumps(scripted.requests[calls:], default=str)[:2000]
    assert [p["context_text"] for p in _lines(run / "predictions.jsonl")] == [p["context_text"] for p in preds]


def test_mem0_vendor_recipe_each_speaker_top_10(scripted, tmp_path, data_dir) -> None:
    _need_env()
    args = ["method=mem0_vendor", "dataset=locomo", "dataset.loader.conversations=[conv-30]", "subset.n=3",
            "subset.index_units=2", "method.setup=require", *scripted_overrides(scripted, tmp_path, data_dir)]
    r = run_cli(args, timeout=1200)
    assert r.returncode == 0, r.stderr[-4000:]
    (run,) = sorted((tmp_path / "runs" / "locomo").glob("mem0_vendor-*"))
    info = json.loads((run / "index.json").read_text())["corpora"][0]["info"]
    assert info["views"] == ["Gina", "Jon"]
    turns = [u["messages"] for u in info["index"]["per_unit"].values()]
    assert len(_mem0_calls(scripted)) == info["planned_adds"] == sum(2 * -(-m // 4) for m in turns)
    for p in _lines(run / "predictions.jsonl"):
        assert p["retrieval"]["views"] == ["Gina", "Jon"] and p["retrieval"]["top_k"] == 10
        assert "Memories of Gina:" in p["context_text"] and set(p["context_chapters"]) <= {"1", "2"}


def test_an_extraction_reply_mem0_cannot_parse_reaches_health(scripted, tmp_path, data_dir) -> None:
    """mem0 logs and swallows a reply it cannot parse (a small model's, cut at max_tokens, as the
    real 0.5B's first 3 adds on conv-30 were): the worker counts it, so health names the failed
    call and not only the empty session. A reply with an item that is not an object (the shape of
    the 1.5B's reply on EpBench chapter 8, 2026-12-04, which ended mem0's run with an
    AttributeError) keeps its other memories, and health says so."""
    _need_env()
    scripted.add_rule(r"Observation Date\n2023-01-20", lambda m, r: '{"memory": [{"text": "Gina lost her job at')
    scripted.add_rule(r"Observation Date\n2023-01-29", lambda m, r: (
        '{"memory": [{"id": "0", "text": "Jon opened a dance studio", "attributed_to": "user"},\n'
        '  {"id": "1", "text": "Jon found a place downtown" },\n  "attributed_to" ]}'))
    args = ["method=mem0", "dataset=locomo", "dataset.loader.conversations=[conv-30]", "subset.n=2",
            "subset.index_units=2", "method.setup=require", *scripted_overrides(scripted, tmp_path, data_dir)]
    r = run_cli(args, timeout=1200)
    assert r.returncode == 0, r.stderr[-4000:]
    (run,) = sorted((tmp_path / "runs" / "locomo").glob("mem0-*"))
    rows = json.loads((run / "index.json").read_text())["corpora"][0]["info"]["index"]["per_unit"]
    assert [(u["chat_attempts"], u["schema_invalid"], u["schema_repaired"], u["memories"]) for u in rows.values()] == [
        (1, 1, 0, 0), (1, 0, 1, 2)]
    checks = {c["name"]: c for c in json.loads((run / "health.json").read_text())["checks"]}
    failed = checks["structured_call_failures"]
    assert failed["status"] == "fail" and failed["value"] == 0.5, failed
    assert "1 of 2 structured extraction calls" in failed["message"] and "1 invalid" in failed["message"]
    assert "1 replies kept after their malformed items were left out" in failed["message"]
    assert checks["units_empty"]["status"] != "ok" and "1 of 2 (50%) without memories" in checks["units_empty"]["message"]


@pytest.mark.parametrize("dataset", ["longmemeval_oracle", "epbench20"])
def test_mem0_on_longmemeval_and_epbench(dataset, scripted, tmp_path, data_dir) -> None:
    _need_env()
    args = ["method=mem0", f"dataset={dataset}", "subset.n=2", "method.setup=require",
            *(["subset.index_units=4"] if dataset == "epbench20" else []),
            *scripted_overrides(scripted, tmp_path, data_dir)]
    r = run_cli(args, timeout=1200)
    assert r.returncode == 0, r.stderr[-4000:]
    (run,) = sorted((tmp_path / "runs" / dataset).glob("mem0-*"))
    for c in json.loads((run / "index.json").read_text())["corpora"]:
        assert c["info"]["egress_refused"] == 0
        if dataset == "epbench20":  # chapters 3 and 4 state their dates; dated from the text
            assert c["info"]["unit_dates"]["3"] == {"observation_date": "2026-09-22", "timestamp": "2026-09-22",
                                                    "source": "text"}
    for p in _lines(run / "predictions.jsonl"):
        assert p["cap_audit"]["verbatim_beyond_units"] == []


def test_guard_would_catch_a_leak_from_the_mem0_environment(tmp_path) -> None:
    """The control for the no-egress assertions above: in the mem0 environment, under the
    harness's worker environment, an OpenAI client pointed off the machine is refused and logged."""
    env_path = _need_env()
    log = tmp_path / "egress.jsonl"
    code = ("import mem0, openai\n"
            "try:\n"
            "    openai.OpenAI(base_url='http://192.0.2.1:9/v1', api_key='x', max_retries=0, timeout=5).models.list()\n"
            "except openai.APIConnectionError as exc:\n"
            "    print('refused', exc)\n")
    proc = subprocess.run([str(envs.env_python(env_path)), "-c", code], capture_output=True, text=True,
                          env=envs.worker_env(env_path, WORKER_ENV, egress_log=log), cwd=tmp_path, timeout=120)
    assert proc.returncode == 0 and "refused" in proc.stdout, proc.stderr[-2000:]
    attempts = envs.egress_attempts(log)
    assert attempts and all("192.0.2.1" in a["target"] for a in attempts), attempts
