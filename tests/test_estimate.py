"""Cost estimates: real prompts counted before any call, checked against scripted-server runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, scripted_overrides

from memeval.harness.estimate import LocalRate, compose, estimate, format_estimate, price_records
from memeval.methods.external.base import ExternalMethod
from memeval.methods.external.cost_model import CostModel, IndexCall
from memeval.methods.external.envs import EnvSpec
from memeval.methods.vanilla import Vanilla
from memeval.model_access.dry import CallRecord, DryRecorder, schema_instance
from memeval.model_access.gate import CallSettings
from memeval.model_access.tokenizer import count_tokens
from memeval.model_access.usage import Price


def _o200k(server) -> None:
    """Make the scripted server bill like OpenAI: o200k tokens plus the chat format's overhead."""
    server.count_text = count_tokens
    server.per_message_tokens = 4
    server.per_request_tokens = 3


def _compare(server, tmp: Path, data_dir: Path, method: str) -> tuple[dict, dict]:
    _o200k(server)
    args = [f"method={method}", "dataset=epbench20", "subset.n=4", *scripted_overrides(server, tmp, data_dir)]
    est = estimate(compose(args))
    assert server.count() == 0, "an estimate must not call any model"
    done = run_cli(args)
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = (tmp / "runs" / "epbench20").glob(f"{method}-*")
    return est, json.loads((run / "usage.json").read_text())


@pytest.mark.parametrize("method", ["vanilla", "embedding_rag"])
def test_estimate_is_within_ten_percent_of_a_scripted_run(scripted, tmp_path, data_dir, method) -> None:
    est, usage = _compare(scripted, tmp_path, data_dir, method)
    for stage, row in usage["stages"].items():
        actual = row["fresh"]["prompt_tokens"]
        assert est["stages"][stage]["calls"] == row["fresh"]["calls"], stage
        assert abs(est["stages"][stage]["prompt_tokens"] - actual) <= 0.10 * actual, (stage, est["stages"][stage])
    again = estimate(compose([f"method={method}", "dataset=epbench20", "subset.n=4",
                              *scripted_overrides(scripted, tmp_path, data_dir)]))
    assert again["total"]["calls"] == 0 and again["total"]["usd"] == 0  # the cache holds it all
    chat_calls = sum(usage["stages"][s]["fresh"]["calls"] for s in ("answer", "judge"))
    assert again["total"]["cached_calls"] == chat_calls  # every chat call found in the cache


def test_gsw_estimate_models_reply_dependent_calls_within_its_documented_error(scripted, tmp_path, data_dir) -> None:
    est, usage = _compare(scripted, tmp_path, data_dir, "gsw")
    actual = usage["totals"]["fresh"]["prompt_tokens"]
    err = (est["total"]["prompt_tokens"] - actual) / actual
    print(f"gsw estimate error vs scripted run: {err:+.1%}")
    assert abs(err) < 0.25  # README: +4% with the default reply model (2 entries per JSON list)
    assert est["stages"]["retrieve"]["prompt_tokens"] == usage["stages"]["retrieve"]["fresh"]["prompt_tokens"]


def test_run_py_stage_estimate_prints_the_table_and_calls_nothing(scripted, tmp_path, data_dir) -> None:
    r = run_cli(["method=vanilla", "dataset=epbench20", "subset.n=2", "stages=[estimate]",
                 "+prices.models.scripted-llm={input:2.5,output:10.0,cached_input:1.25}",
                 *scripted_overrides(scripted, tmp_path, data_dir)])
    assert r.returncode == 0, r.stderr[-2000:]
    assert "estimate: vanilla on epbench20" in r.stdout and "USD batch" in r.stdout
    assert scripted.count() == 0 and not (tmp_path / "runs" / "epbench20").exists()


def test_prices_apply_prefix_caching_and_the_batch_discount() -> None:
    recs = [CallRecord("index", "m", 2000, 0, False, 1024, 1000),
            CallRecord("answer", "m", 1000, 0, False, 0, 100),
            CallRecord("answer", "m", 5, 7, True, 0, 100)]  # cached: free, counted apart
    out = price_records(recs, {"m": Price(input=2.0, output=8.0, cached_input=1.0)}, {"m": 0.5},
                        {"index"}, {"index": 0.5, "answer": 0.1})
    idx, ans = out["stages"]["index"], out["stages"]["answer"]
    # index: 976 x $2 + 1024 x $1 + 500 x $8 per 1M; batch: (2000 x 2 + 500 x 8) / 2 per 1M
    assert idx["usd"] == pytest.approx(0.006976) and idx["usd_batch"] == pytest.approx(0.004)
    assert ans["usd"] == ans["usd_batch"] == pytest.approx((1000 * 2 + 10 * 8) / 1e6)
    assert ans["cached_calls"] == 1 and ans["calls"] == 1


def test_local_model_time_counts_fresh_prompt_tokens_and_predicted_output_of_uncached_local_calls() -> None:
    """A local model is paid in seconds: a prefix its server's slot already holds, a call the
    cache answers and a call to an API model cost no local time."""
    recs = [CallRecord("answer", "local", 10_000, 0, False, 9_000, 100),   # 1,000 fresh, 50 out
            CallRecord("answer", "local", 10_000, 0, True, 0, 100),        # cached
            CallRecord("judge", "api", 800, 0, False, 0, 400)]             # no throughput entry
    out = price_records(recs, {}, {}, set(), {"answer": 0.5, "judge": 0.25},
                        throughput={"local": LocalRate(250.0, 25.0)})
    assert out["stages"]["answer"]["local_seconds"] == pytest.approx(1_000 / 250 + 50 / 25)
    assert out["stages"]["judge"]["local_seconds"] == 0 and out["total"]["local_seconds"] == pytest.approx(6.0)
    assert price_records(recs, {}, {}, set(), {"answer": 0.5})["total"]["local_seconds"] == 0


def test_a_long_context_slows_the_tokens_after_it() -> None:
    """With slowdowns, a token costs more the more context precedes it: the same 1,000 fresh
    tokens and 100 output tokens cost more after a 9,000-token reused prefix than alone, and the
    single-rate model (slowdowns 0) prices both the same."""
    flat, sloped = LocalRate(250.0, 25.0), LocalRate(250.0, 25.0, 0.5, 0.2)
    assert flat.seconds(10_000, 9_000, 100) == pytest.approx(flat.seconds(1_000, 0, 100))
    short, long = sloped.seconds(1_000, 0, 100), sloped.seconds(10_000, 9_000, 100)
    assert short > flat.seconds(1_000, 0, 100) and long > 3 * short


def test_the_shipped_price_table_times_both_local_models() -> None:
    table = compose(["llm=local_small"]).prices.local_throughput.models
    assert set(table) >= {"qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"}
    assert all(v.prompt_tps > v.generated_tps > 0 for v in table.values())


def test_repeated_prefixes_count_as_cached_input() -> None:
    rec = DryRecorder(output_ratio={})
    book = " ".join(f"word{i}" for i in range(3000))
    first = rec._prefix_cached("m", [{"role": "user", "content": book + " question one"}])
    second = rec._prefix_cached("m", [{"role": "user", "content": book + " another question"}])
    assert first == 0 and 1024 <= second <= count_tokens(book) + 8 and second % 128 == 0


def test_placeholder_json_validates_against_the_methods_schemas() -> None:
    from memeval.evaluation.epbench.judge import judgment_model
    from memeval.methods.gsw.schemas import FFAnswers, OperatorOutput

    for model in (judgment_model(3), OperatorOutput, FFAnswers):
        for items in (0, 2):
            model.model_validate(schema_instance(model.model_json_schema(), words=["Ann Example"], items=items))


def test_placeholder_vectors_have_the_embedders_dimension_when_nothing_in_the_batch_is_cached() -> None:
    """Regression: `memeval.harness.estimate method=gsw` on a partly cached local index compared 384-dim
    cached entry vectors with 256-dim placeholder query vectors and crashed in retrieval."""
    import asyncio

    from memeval.model_access.local_embedder import SentenceTransformerEmbedder

    emb = SentenceTransformerEmbedder(model="all-minilm-l6-v2", settings=CallSettings(dry=DryRecorder(output_ratio={})))
    vecs = asyncio.run(emb.embed(["Where did Ida Wren sail?"], input_type="query"))
    assert vecs.shape == (1, emb.dimension) and emb.dimension == 384


def test_a_compact_reply_is_predicted_at_its_layouts_measured_share_of_json() -> None:
    """The output prior is calibrated on JSON replies; a call in the compact GSW layout is
    predicted at the layout's measured token share, and the placeholder still decodes."""
    from dataclasses import replace
    from types import SimpleNamespace

    from memeval.methods.gsw.wire import OPERATOR_FORMAT
    from memeval.model_access.usage import UsageLedger, stage

    client = SimpleNamespace(display_name="gpt-4o", ledger=UsageLedger())
    req = {"messages": [{"role": "user", "content": "Ida Wren met Tobin Marwen at Bryn Cove."}], "max_tokens": 1500}
    rec = DryRecorder(output_ratio={"index": 0.30})
    with stage("index"):
        unscaled = rec.chat(client, req, replace(OPERATOR_FORMAT, tokens_vs_json=None))
        compact = rec.chat(client, req, OPERATOR_FORMAT)
    assert unscaled.completion_tokens == 450 and compact.completion_tokens == round(450 * 0.490)
    OPERATOR_FORMAT.decode(compact.text)
    # the price table recomputes output from the stage's ratio: the layout's share survives it,
    # and a ratio measured on real replies of the stage is used as it is
    price = {"gpt-4o": Price(input=2.5, output=10.0)}
    prior = price_records(rec.records, price, {}, set(), {"index": 0.30})
    assert prior["stages"]["index"]["output_tokens"] == 450 + round(450 * 0.490)
    measured = price_records(rec.records, price, {}, set(), {"index": 0.10}, frozenset({"index"}))
    assert measured["stages"]["index"]["output_tokens"] == 2 * 150


def test_mem0_is_priced_one_extraction_call_per_unit_and_its_speaker_view_plan_is_refused(
        scripted, tmp_path, data_dir) -> None:
    args = ["dataset=epbench20", "subset.n=2", "subset.index_units=3", *scripted_overrides(scripted, tmp_path, data_dir)]
    e = estimate(compose(["method=mem0", *args]))
    assert scripted.count() == 0
    # 3 chapters: one extraction call each to the answering model (llm_index=same), one embedding batch each
    assert e["stages"]["index"]["calls"] == 6 and e["questions"] == 2
    with pytest.raises(ValueError, match="speaker-view plan"):
        estimate(compose(["method=mem0_vendor", *args]))


def test_cognee_answers_are_priced_with_the_graph_text_it_adds_beyond_the_cap(
        scripted, tmp_path, data_dir, monkeypatch) -> None:
    """Measured: cognee's contexts held about 1,200 tokens of graph text beside its 3 chapters, and
    an estimate that priced the chapters alone predicted 5 s an answer against 45 s."""
    from dataclasses import replace

    from memeval.methods.external.cognee import CogneeMethod

    args = ["method=cognee", "dataset=epbench20", "subset.n=3", "subset.index_units=8",
            *scripted_overrides(scripted, tmp_path, data_dir)]
    with_graph = estimate(compose(args))["stages"]["answer"]["prompt_tokens"]
    monkeypatch.setattr(CogneeMethod, "cost_model", replace(CogneeMethod.cost_model, uncapped_tokens=0))
    chapters_only = estimate(compose(args))["stages"]["answer"]["prompt_tokens"]
    assert scripted.count() == 0
    per_answer = (with_graph - chapters_only) / 3
    assert 1100 <= per_answer <= 1300, per_answer



class StubPackageMethod(ExternalMethod):
    """A third party's package method: its environment (never built here) and its own cost model,
    which no table in the harness names."""

    env_spec = EnvSpec("stub", "/nonexistent/stub-lock.txt", worker="stub_worker.py")
    cost_model = CostModel(calls=(IndexCall("extract", 2, 100, 10), IndexCall("merge (one per 2 units)", 0.5, 50, 5, False)),
                           query_calls=(IndexCall("rewrite", 1, 40, 8, False),), context_tokens=500, embed_per_chunk=64)


class StubWithoutCostModel(ExternalMethod):
    env_spec = EnvSpec("stub", "/nonexistent/stub-lock.txt", worker="stub_worker.py")


class BatchedVanilla(Vanilla):
    batch_index = True  # its index calls could go to the Batch API


def _stub_config(scripted, tmp_path: Path, data_dir: Path, cls: type):  # noqa: ANN001, ANN202
    cfg = compose(["method=mem0", "dataset=epbench20", "subset.n=2", "subset.index_units=3",
                   *scripted_overrides(scripted, tmp_path, data_dir)])
    cfg.method = {"_target_": f"{cls.__module__}.{cls.__qualname__}", "name": "stub"}  # its own parameters only
    return cfg


def test_a_package_method_is_priced_from_the_cost_model_its_own_class_declares(scripted, tmp_path, data_dir) -> None:
    e = estimate(_stub_config(scripted, tmp_path, data_dir, StubPackageMethod))
    assert scripted.count() == 0
    # 3 units: 2 extract calls, 1 merge call (a fraction rounds up) and 1 embedding each; per
    # question one rewrite and one query embedding
    assert e["stages"]["index"]["calls"] == 3 * 4 and e["stages"]["retrieve"]["calls"] == 2 * 2
    assert e["stages"]["answer"]["calls"] == 2 and "StubPackageMethod.cost_model" in e["how"]
    assert "index" not in e["batch_stages"]  # a package's index calls wait on each other's replies


def test_a_package_method_without_a_cost_model_is_estimated_with_a_line_saying_so(
        scripted, tmp_path, data_dir) -> None:
    e = estimate(_stub_config(scripted, tmp_path, data_dir, StubWithoutCostModel))
    assert scripted.count() == 0
    assert "index" not in e["stages"] and e["stages"]["answer"]["calls"] == 2 and e["stages"]["judge"]["calls"] == 2
    assert e["note"].startswith("no cost model: declare `cost_model`") and "StubWithoutCostModel" in e["note"]
    assert f"({e['note']})" in format_estimate(e)


def test_the_batch_discount_on_indexing_follows_the_method_class(scripted, tmp_path, data_dir) -> None:
    args = ["method=vanilla", "dataset=epbench20", "subset.n=2", *scripted_overrides(scripted, tmp_path, data_dir)]
    assert estimate(compose(args))["batch_stages"] == ["judge"]
    cfg = compose(args)
    cfg.method._target_ = f"{BatchedVanilla.__module__}.BatchedVanilla"
    assert estimate(cfg)["batch_stages"] == ["index", "judge"]
