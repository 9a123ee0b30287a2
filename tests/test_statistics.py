"""Honest intervals (issue 25): Holm's correction, the cluster bootstrap over conversations, the
minimum detectable difference, a stratified subset's weighted overall, and the gold-audit split,
each on a hand-built case whose answer is worked out in the test."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest
from conftest import v1_run
from omegaconf import OmegaConf

import memeval.datasets.locomo as locomo_data
from memeval.datasets.facts import dataset_facts, population
from memeval.datasets.integrity import DataFile
from memeval.datasets.subset import stratified_subset
from memeval.datasets.types import Dataset, GoldAudit, Question
from memeval.evaluation.conversations.locomo import ONE_CONVERSATION, LoCoMoProtocol
from memeval.evaluation.report.build import build_report
from memeval.evaluation.runs.blocks import stratified_block
from memeval.evaluation.runs.folder import RunFolder
from memeval.evaluation.runs.scoring import read_metrics, score_run
from memeval.evaluation.runs.upgrade import RUN_FORMAT
from memeval.evaluation.stats import (
    bootstrap_std,
    holm,
    min_detectable_difference,
    paired_difference,
    stratified_mean,
)

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = "memeval.evaluation.conversations.locomo.LoCoMoProtocol"


# -- Holm ----------------------------------------------------------------------------------

def test_holm_on_a_hand_computed_case() -> None:
    # sorted 0.01, 0.03, 0.04, 0.20 (m = 4): x4 = 0.04, x3 = 0.09, x2 = 0.08 -> 0.09 (monotone), x1 = 0.20
    assert holm([0.01, 0.04, 0.03, 0.20]) == pytest.approx([0.04, 0.09, 0.09, 0.20])
    assert holm([0.6, 0.7]) == [1.0, 1.0]  # 1.2 capped at 1, then kept non-decreasing
    out = holm([math.nan, 0.02, 0.5])  # NaN is not a test: m = 2
    assert math.isnan(out[0]) and out[1:] == pytest.approx([0.04, 0.5])
    assert holm([]) == []


def test_min_detectable_difference_is_2_80_standard_errors() -> None:
    # z(0.975) = 1.959964, z(0.80) = 0.841621
    assert min_detectable_difference(0.1) == pytest.approx(0.2801585, abs=1e-6)
    assert min_detectable_difference(0.1, alpha=0.05, power=0.5) == pytest.approx(0.1959964, abs=1e-6)


# -- cluster bootstrap ---------------------------------------------------------------------

def test_cluster_bootstrap_differs_from_the_question_bootstrap_both_ways() -> None:
    convs = ["A"] * 10 + ["B"] * 10
    mean = lambda values: lambda i: sum(values[k] for k in i) / len(i)  # noqa: E731
    # A's questions all right, B's all wrong: resampling questions, std = sqrt(.25 / 20) = 0.112;
    # resampling the 2 conversations, the mean is 1, 0.5 or 0 with p 1/4, 1/2, 1/4: std sqrt(1/8) = 0.354
    split = [1.0] * 10 + [0.0] * 10
    q = bootstrap_std(20, mean(split), 2000, 0)
    c = bootstrap_std(20, mean(split), 2000, 0, convs)
    assert q == pytest.approx(0.112, abs=0.01) and c == pytest.approx(0.354, abs=0.02)
    # each conversation half right: every conversation draw has mean 0.5 (std 0), questions still 0.112
    alike = [1.0, 0.0] * 10
    assert bootstrap_std(20, mean(alike), 2000, 0) == pytest.approx(0.112, abs=0.01)
    assert bootstrap_std(20, mean(alike), 2000, 0, convs) == pytest.approx(0.0, abs=1e-12)
    assert math.isnan(bootstrap_std(20, mean(alike), 200, 0, ["A"] * 20))  # one cluster: no spread to see


def test_paired_difference_over_conversations() -> None:
    ids = [f"conv-{c}-q{i}" for c in "AB" for i in range(10)]
    a = {q: 1.0 if q.startswith("conv-A") else 0.0 for q in ids}  # better on conversation A only
    b = dict.fromkeys(ids, 0.0)
    clusters = {q: q.rsplit("-q", 1)[0] for q in ids}
    by_q = paired_difference(a, b, 2000)
    by_c = paired_difference(a, b, 2000, clusters=clusters)
    assert by_q["diff"] == by_c["diff"] == 0.5
    assert by_q["diff_std"] == pytest.approx(0.112, abs=0.01) and by_c["diff_std"] == pytest.approx(0.354, abs=0.02)
    assert by_q["ci95_low"] > 0 and by_c["ci95_low"] == 0.0  # a quarter of the draws pick B twice
    assert by_q["p_two_sided"] < 0.01 and by_c["p_two_sided"] > 0.4
    with pytest.raises(ValueError, match="2\\+ clusters"):
        paired_difference(a, b, 10, clusters=dict.fromkeys(ids, "one"))


def _locomo_preds(scores: dict[str, list[int]], category: int = 4) -> tuple[list[dict], list[dict]]:
    preds, judg = [], []
    for conv, values in scores.items():
        for i, v in enumerate(values):
            qid = f"{conv}-q{i}"
            preds.append({"question_id": qid, "corpus_id": conv, "category": category, "gold": ["blue"],
                          "answer": "blue" if v else "red", "gold_units": ["1"], "context_chapters": ["1"],
                          "context_tokens": 10, "question": "What colour?"})
            judg.append({"question_id": qid, "category": category, "judge_prompt": "locomo-judge-v2",
                         "label": "CORRECT" if v else "WRONG", "correct": v, "grounded": True})
    return preds, judg


def test_locomo_resamples_conversations_when_a_run_holds_two() -> None:
    p = LoCoMoProtocol(resamples=2000)
    preds, judg = _locomo_preds({"conv-A": [1] * 10, "conv-B": [0] * 10})
    res = p.resampling(preds)
    assert (res.unit, res.n_units, res.note) == ("conversation", 2, None)
    m = p.metrics(judg, preds)
    assert m["overall"]["judge"] == 0.5 and m["overall"]["judge_std"] == pytest.approx(0.354, abs=0.02)
    one = [x for x in preds if x["corpus_id"] == "conv-A"] + [
        {**x, "corpus_id": "conv-A", "question_id": x["question_id"].replace("conv-B", "conv-A2")}
        for x in preds if x["corpus_id"] == "conv-B"]
    res1 = p.resampling(one)
    assert (res1.unit, res1.n_units, res1.note) == ("question", 20, ONE_CONVERSATION)


# -- stratified subset ---------------------------------------------------------------------

def test_stratum_weights_on_a_hand_built_subset() -> None:
    """456 questions in buckets 180/180/72/24 (EpBench-20's), 40 drawn evenly: the subset gives
    bucket 0 a quarter of its questions; the population gives it 180/456 of the weight."""
    counts = {"0": 180, "1": 180, "2": 72, "3-5": 24}
    qs = [Question(f"q{b}-{i}", "book", "?", ("x",), attrs={"bucket": b}) for b, n in counts.items() for i in range(n)]
    sub = stratified_subset(qs, 40, "bucket", seed=0)
    assert [sum(q.attrs["bucket"] == b for q in sub) for b in counts] == [10, 10, 10, 10]
    pop = population(qs, "bucket")
    assert pop == {"key": "bucket", "n": 456, "counts": counts}
    # every bucket-0 question right (a correct "none"), every other wrong
    scores = {q.id: 1.0 if q.attrs["bucket"] == "0" else 0.0 for q in sub}
    block = stratified_block(scores, {q.id: q.attrs["bucket"] for q in sub}, pop, "f1")
    assert block["unweighted"] == 0.25 and block["weighted"] == pytest.approx(180 / 456)
    assert block["weights"]["0"] == pytest.approx(180 / 456) and block["sample"] == dict.fromkeys(counts, 10)
    assert block["weighted_std"] == pytest.approx(0.0, abs=1e-12)  # no spread within any bucket
    # a stratum the run did not score: weights renormalised over the others, and listed
    part = {q: v for q, v in scores.items() if not q.startswith("q3-5")}
    b2 = stratified_block(part, {q.id: q.attrs["bucket"] for q in sub}, pop, "f1")
    assert b2["missing_strata"] == ["3-5"] and b2["weighted"] == pytest.approx(180 / 432)


def test_stratified_mean_std_resamples_within_strata() -> None:
    values, strata = [1.0, 0.0, 1.0, 1.0], ["a", "a", "b", "b"]
    value, std = stratified_mean(values, strata, {"a": 3, "b": 1}, 2000, 0)
    assert value == pytest.approx(0.75 * 0.5 + 0.25 * 1.0)
    # only stratum a varies: its mean of 2 draws is 0, .5, 1 w.p. 1/4, 1/2, 1/4 (std sqrt(1/8)), x 0.75
    assert std == pytest.approx(0.75 * math.sqrt(1 / 8), abs=0.02)


# -- gold audit ----------------------------------------------------------------------------

def _locomo_run(root: Path, name: str, scores: dict[str, list[int]], flagged: dict[str, str],
                counts: dict[str, int] | None = None, category: int = 4) -> Path:
    folder = RunFolder(root / "locomo" / name)
    (folder / "config.yaml").write_text(OmegaConf.to_yaml(
        {"run_format": RUN_FORMAT, "dataset": {"protocol": {"_target_": LOCOMO, "resamples": 200}}}))
    preds, judg = _locomo_preds(scores, category)
    n = len(preds)
    pop = {"key": "category", "n": sum(counts.values()), "counts": counts} if counts else \
        {"key": "category", "n": n, "counts": {str(category): n}}
    folder.write_json("meta.json", {
        "run_format": RUN_FORMAT, "method": name.split("-")[0], "dataset": "locomo", "answer_model": "m",
        "judge_model": "j", "data_version": "v", "subset": "all", "context_cap": "5 units",
        "protocol": LoCoMoProtocol().describe(), "strata_key": "category", "population": pop,
        "gold_audit": {"source": "audit.jsonl@x", "rule": "hand-made", "available": True, "flagged": flagged}})
    folder.write_jsonl("predictions.jsonl", preds)
    folder.write_jsonl("judgments.jsonl", judg)
    score_run(folder)
    return folder.root


def test_audited_and_unaudited_split_on_a_hand_built_locomo_run(tmp_path: Path) -> None:
    # 4 questions, 3 right; the audit flags one right one: J 0.75 on 4, 2/3 on the other 3
    run = _locomo_run(tmp_path, "vanilla-0000000001", {"conv-A": [1, 1, 0, 1]}, {"conv-A-q1": "audit_a HALLUCINATION",
                                                                                "conv-Z-q9": "not in this run"})
    m = json.loads((run / "metrics.json").read_text())
    g = m["gold_audit"]
    assert g["all"] == {"n": 4, "judge": 0.75} and g["unflagged"] == {"n": 3, "judge": pytest.approx(2 / 3)}
    assert g["flagged_ids"] == ["conv-A-q1"] and g["all"]["judge"] == m["overall"]["judge"]
    assert m["statistics"] == {"resampling_unit": "question", "n_units": 4, "note": ONE_CONVERSATION}
    assert "stratified" not in m  # every question of the population is in the run
    md = (run / "results.md").read_text()
    assert "J 0.750 on all 4 questions, 0.667 on the 3 no audit flags (1 flagged" in md
    assert ONE_CONVERSATION in md
    other = _locomo_run(tmp_path, "embedding_rag-0000000002", {"conv-A": [1, 0, 0, 1]}, {"conv-A-q1": "x"})
    text = build_report([run, other], tmp_path / "rep", reference=run)[0].read_text()
    audit = text.split("### J on all questions and on those no gold audit flags")[1].split("###")[0]
    assert "| vanilla | 0.750 | 4 | 0.667 | 3 | 1 |" in audit
    assert "| embedding_rag | 0.500 | 4 | 0.667 | 3 | 1 |" in audit
    paired = text.split("### Paired differences")[1]
    assert "| p | p (Holm) |" in paired and "Minimum detectable difference at n = 4" in paired
    assert "Note on the ±: one conversation" in text


def test_a_two_conversation_report_pairs_by_conversation_and_weights_a_subset(tmp_path: Path) -> None:
    counts = {"1": 30, "4": 10, "5": 60}  # category 5 is out of the overall: weights 1 -> 0.75, 4 -> 0.25
    ref = _locomo_run(tmp_path, "vanilla-0000000003", {"conv-A": [0] * 4, "conv-B": [0] * 4}, {}, counts)
    run = _locomo_run(tmp_path, "gsw-0000000004", {"conv-A": [1] * 4, "conv-B": [0] * 4}, {}, counts)
    for r in (ref, run):  # conv-A's questions are category 1, conv-B's category 4
        lines = [json.loads(x) for x in (r / "predictions.jsonl").read_text().splitlines()]
        judg = [json.loads(x) for x in (r / "judgments.jsonl").read_text().splitlines()]
        for x in (*lines, *judg):
            x["category"] = 1 if x["question_id"].startswith("conv-A") else 4
        RunFolder(r).write_jsonl("predictions.jsonl", lines)
        RunFolder(r).write_jsonl("judgments.jsonl", judg)
        score_run(RunFolder(r))
    m = read_metrics(RunFolder(run))
    assert m["statistics"] == {"resampling_unit": "conversation", "n_units": 2}
    s = m["stratified"]
    assert s["weights"] == {"1": 0.75, "4": 0.25} and s["weighted"] == 0.75 and s["unweighted"] == 0.5
    text = build_report([ref, run], tmp_path / "rep", reference=ref)[0].read_text()
    row = next(x for x in text.split("### Paired differences")[1].splitlines() if x.startswith("| gsw"))
    assert float(row.split(" | ")[5]) > 0.28  # conversation draws: std ~0.354 (questions would give ~0.177)
    assert "whole conversations (a cluster bootstrap over 2 conversations)" in text
    assert "| gsw | 0.750 ± " in text.split("weighted by population share")[1]
    # the paired table compares per-question means (+0.5); the weighted difference under it is
    # 0.75 (category 1: +1 at weight 0.75, category 4: 0). Four questions a stratum, each alike:
    # the stratified bootstrap would print ± 0.000 and MDE 0.000, so neither is printed
    assert row.split(" | ")[4] == "+0.500"
    assert "Weighted by population share (category): differences gsw +0.750; no std or detectable" in text
    assert "+0.750 ± 0.000" not in text and "MDE 0.000" not in text
    assert "| gsw | 0.750 ± – (not estimated: 2 of 2 strata hold fewer than 5 questions) |" in text


def test_two_runs_that_score_every_question_alike_print_no_detectable_difference(tmp_path: Path) -> None:
    """LongMemEval's oracle runs answered the same 12 questions right: every paired difference is
    0, the bootstrap std is 0, and "MDE 0.000" would read as a test that detects anything."""
    ref = _locomo_run(tmp_path, "vanilla-0000000005", {"conv-A": [1, 0, 1, 1, 0, 1]}, {})
    same = _locomo_run(tmp_path, "seem-0000000006", {"conv-A": [1, 0, 1, 1, 0, 1]}, {})
    other = _locomo_run(tmp_path, "gsw-0000000007", {"conv-A": [1, 1, 0, 1, 0, 0]}, {})
    text = build_report([ref, same, other], tmp_path / "rep", reference=ref)[0].read_text()
    mde = next(x for x in text.split("### Paired differences")[1].splitlines() if x.startswith("Minimum detectable"))
    assert "seem – (not estimated: every question differs by the same amount)" in mde
    assert "seem 0.000" not in mde and re.search(r"gsw 0\.\d{3}", mde) and "gsw 0.000" not in mde


# -- the audit file and the loader ----------------------------------------------------------

def _fake_locomo(root: Path, audit_rows: list[dict] | None) -> None:
    conv = {"speaker_a": "A", "speaker_b": "B", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
            "session_1_date_time": "1 May 2023"}
    qa = [{"question": "q0", "answer": "a", "category": 4, "evidence": ["D1:1"]},
          {"question": "q1", "answer": "b", "category": 2, "evidence": ["D1:1"]},
          {"question": "q2", "adversarial_answer": "c", "category": 5, "evidence": []}]
    (root / "locomo").mkdir(parents=True)
    (root / "locomo/locomo10.json").write_text(json.dumps([{"sample_id": "conv-7", "conversation": conv, "qa": qa}]))
    if audit_rows is not None:
        (root / "locomo/audit").mkdir()
        (root / locomo_data.AUDIT_REL).write_text("".join(json.dumps(r) + "\n" for r in audit_rows))


def test_gold_audit_rows_map_to_question_ids(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(locomo_data, "verify", lambda root, rel, files=None: DataFile(rel, "ab" * 32, "test"))
    _fake_locomo(tmp_path, [
        {"sample_id": "conv-7", "qa_index": 0, "category": 4, "audit_a": {"type": "WRONG_CITATION", "score_corrupting": False}},
        {"sample_id": "conv-7", "qa_index": 1, "category": 2, "audit_a": {"type": "TEMPORAL_ERROR", "score_corrupting": True},
         "audit_b": {"label": "WRONG"}}])
    ds = locomo_data.LoCoMoLoader(str(tmp_path)).load()
    assert ds.gold_audit.flagged == {"conv-7-q1": "audit_a TEMPORAL_ERROR; audit_b WRONG"}  # a wrong citation alone is not
    facts = dataset_facts(ds, ds.questions, ["conv-7-q0", "conv-7-q1"])
    assert facts["gold_audit"]["flagged"] == {"conv-7-q1": "audit_a TEMPORAL_ERROR; audit_b WRONG"}
    assert facts["population"]["counts"] == {"2": 1, "4": 1, "5": 1}
    assert dataset_facts(ds, ds.questions, ["conv-7-q0"])["gold_audit"]["flagged"] == {}


def test_a_misaligned_or_missing_audit_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(locomo_data, "verify", lambda root, rel, files=None: DataFile(rel, "ab" * 32, "test"))
    _fake_locomo(tmp_path / "bad", [{"sample_id": "conv-7", "qa_index": 0, "category": 2, "audit_b": {"label": "WRONG"}}])
    with pytest.raises(Exception, match="does not match locomo10.json"):
        locomo_data.LoCoMoLoader(str(tmp_path / "bad")).load()
    _fake_locomo(tmp_path / "none", None)
    audit = locomo_data.LoCoMoLoader(str(tmp_path / "none")).load().gold_audit
    assert audit == GoldAudit(locomo_data.AUDIT_REL, locomo_data.AUDIT_RULE, {}, available=False)


def test_the_real_audit_flags_143_questions(data_dir: Path) -> None:
    if not (data_dir / locomo_data.AUDIT_REL).exists():
        pytest.skip("locomo/audit/gold_audit.jsonl missing: run `python scripts/fetch_data.py`")
    everything = locomo_data.LoCoMoLoader(str(data_dir)).load().gold_audit
    assert len(everything.flagged) == 143 and everything.source.endswith("@78b3bba45dd0")
    assert len(locomo_data.LoCoMoLoader(str(data_dir), conversations=["conv-30"]).load().gold_audit.flagged) == 7


# -- saved runs ----------------------------------------------------------------------------

@pytest.mark.parametrize("family", ["epbench20-local/runs/epbench20", "locomo-local/runs/locomo"])
def test_old_bundled_runs_read_with_the_blocks(family: str, tmp_path: Path, data_dir: Path) -> None:
    """A format-0 run gets its facts from the data and the blocks from its own artifacts: the
    EpBench subset's weights are the book's bucket shares, conv-30's audit flags 7 questions."""
    src = v1_run(family.split("/")[0], "vanilla")  # the v1 bundle's (tests/fixtures/v1_bundles)
    if family.startswith("locomo") and not (data_dir / locomo_data.AUDIT_REL).exists():
        pytest.skip("locomo/audit/gold_audit.jsonl missing: run `python scripts/fetch_data.py`")
    run = tmp_path / src.name
    shutil.copytree(src, run)
    text = (run / "config.yaml").read_text()
    (run / "config.yaml").write_text(text.replace("data_dir: data", f"data_dir: {data_dir}"))
    m = read_metrics(RunFolder(run))
    assert m["statistics"]["resampling_unit"] == "question"
    if family.startswith("epbench"):
        s = m["stratified"]
        assert s["population"] == {"0": 180, "1": 180, "2": 72, "3-5": 24} and s["sample"] == {"0": 10, "1": 10, "2": 10, "3-5": 10}
        assert s["weights"]["0"] == pytest.approx(180 / 456) and s["unweighted"] == pytest.approx(m["overall"]["f1"])
        assert "gold_audit" not in m
    else:
        g = m["gold_audit"]
        assert len(g["flagged_ids"]) == 7 and g["all"]["judge"] == pytest.approx(m["overall"]["judge"])
        assert g["all"]["n"] - g["unflagged"]["n"] == 7
        assert m["statistics"]["note"] == ONE_CONVERSATION and "stratified" not in m


def test_a_dataset_without_an_audit_records_none() -> None:
    q = [Question("a", "c", "?", ("x",), attrs={"k": "1"})]
    ds = Dataset("d", "v", {}, q, None, "k")  # type: ignore[arg-type]
    assert dataset_facts(ds, q, ["a"]) == {"population": {"key": "k", "n": 1, "counts": {"1": 1}}, "gold_audit": None,
                                           "repeats": {}}
