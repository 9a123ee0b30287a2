"""Run health on hand-built run and index folders: each check can fail, and does where it should.

The run folders are made here (config.yaml naming a method and a protocol, predictions,
judgments, metrics, index.json); the index folders are tiny GSW / SEEM / LightRAG / GraphRAG /
HippoRAG 2 stores written the way those methods write theirs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import v1_bundle, v1_run

from memeval.evaluation.health.answer import answer_checks, loop
from memeval.evaluation.health.context import context_checks, is_empty
from memeval.evaluation.health.index import index_checks
from memeval.evaluation.health.judge import judge_checks
from memeval.evaluation.runs.health_file import load_thresholds, read_health
from memeval.evaluation.runs.upgrade import RUN_FORMAT
from memeval.harness.health import index_folder, run_health, write_health
from memeval.methods.output_guard import name_problem

TH = load_thresholds()
LIGHTRAG = "memeval.methods.external.lightrag.LightRAGMethod"
EPBENCH = "memeval.evaluation.epbench.protocol.EpBenchProtocol"
LOCOMO = "memeval.evaluation.conversations.locomo.LoCoMoProtocol"
REFUSAL = "Sorry, I'm not able to provide an answer to that question.[no-context]"


def _write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")


def _pred(i: int, context: str, answer: str = "Henry Reed", **kw: Any) -> dict[str, Any]:
    return {"question_id": f"q{i}", "corpus_id": "book", "question": f"question {i}?", "gold": ["Henry Reed"],
            "gold_units": ["1"], "answer": answer, "context_text": context, "context_tokens": 5,
            "context_chapters": ["1"], **kw}


def make_run(root: Path, predictions: list[dict[str, Any]], method: str = "memeval.methods.vanilla.Vanilla",
             protocol: str = EPBENCH, judgments: list[dict[str, Any]] | None = None,
             metrics: dict[str, Any] | None = None, index_folder: str | None = None, units: int = 3) -> Path:
    """A scored run folder as the score stage leaves it (current formats)."""
    run = root / "runs" / "book" / "m-0000000000"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(f"run_format: 1\nmethod:\n  _target_: {method}\n"
                                     f"dataset:\n  protocol:\n    _target_: {protocol}\n", encoding="utf-8")
    _write_json(run / "meta.json", {"run_format": RUN_FORMAT, "method": "m"})  # metrics.json read as written
    _write_json(run / "metrics.json", metrics or {"n_judge_failed": 0,
                                                  "retrieval": {"overall": {"gold_recall": 1.0, "n_with_gold": 1}}})
    _write_json(run / "index.json", {"corpora": [{"corpus_id": "book", "units": units}],
                                     "index_folder": index_folder})
    for name, rows in (("predictions.jsonl", predictions), ("judgments.jsonl", judgments or [
            {"question_id": p["question_id"]} for p in predictions])):
        (run / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return run


def _by_name(health: Any) -> dict[str, Any]:
    return {c.name: c for c in health.checks}


# -- context -----------------------------------------------------------------------------------
def test_a_refusal_context_counts_as_empty(tmp_path: Path) -> None:
    """LightRAG's no-context string is 16 tokens of text, and still an empty context."""
    preds = [_pred(i, REFUSAL if i < 3 else f"Chapter {i}: Henry Reed was there.") for i in range(10)]
    run = make_run(tmp_path, preds, method=LIGHTRAG)
    empty = _by_name(run_health(run, TH))["empty_contexts"]
    assert empty.value == 0.3 and empty.status == "fail"
    assert "3 only the package's no-context marker" in empty.message
    # without the method's marker list the same contexts look full: the list is what catches it
    plain = _by_name(run_health(make_run(tmp_path / "v", preds), TH))["empty_contexts"]
    assert plain.value == 0.0 and plain.status == "ok"
    assert is_empty(f"  {REFUSAL}\n", (REFUSAL,)) and not is_empty(f"{REFUSAL} Chapter 1", (REFUSAL,))


def test_forty_questions_sharing_nine_contexts_fail_distinct_context() -> None:
    shared = [_pred(i, f"context number {i % 9}") for i in range(40)]
    check = {c.name: c for c in context_checks(shared, {}, (), True, {"book": 19}, TH["context"])}["distinct_contexts"]
    assert check.value == pytest.approx(9 / 40, abs=1e-4) and check.status == "fail"
    own = [_pred(i, f"context number {i}") for i in range(40)]
    assert {c.name: c for c in context_checks(own, {}, (), True, {"book": 19}, TH["context"])}[
        "distinct_contexts"].status == "ok"


def test_one_context_for_every_question_is_not_judged_when_it_is_the_whole_corpus() -> None:
    """Vanilla gives every question the whole book: one context by design."""
    whole = [_pred(i, "the whole book", context_chapters=["1", "2", "3"]) for i in range(40)]
    check = {c.name: c for c in context_checks(whole, {}, (), True, {"book": 3}, TH["context"])}["distinct_contexts"]
    assert check.status == "not_measured" and check.value is None and "whole corpus (by design)" in check.message
    # a retriever whose cap holds the corpus (LongMemEval's oracle: Embedding RAG's 12 contexts
    # were Vanilla's, byte for byte) is not Vanilla by design: its retrieval was not tested
    audit = {"verbatim_units": ["1"], "verbatim_beyond_units": [], "uncapped_tokens": None, "uncapped_share": None}
    capped = [{**p, "cap_audit": audit} for p in whole]
    check = {c.name: c for c in context_checks(capped, {}, (), True, {"book": 3}, TH["context"])}["distinct_contexts"]
    assert check.value is None and "the cap holds every corpus, so retrieval was not tested" in check.message
    part = [_pred(i, "the whole book", context_chapters=["1", "2"]) for i in range(40)]
    assert {c.name: c for c in context_checks(part, {}, (), True, {"book": 3}, TH["context"])}[
        "distinct_contexts"].status == "fail"


def test_gold_strings_missing_from_contexts_that_claim_the_gold_units_fail() -> None:
    metrics = {"retrieval": {"overall": {"gold_recall": 1.0, "n_with_gold": 4}}}
    summaries = [_pred(i, "A summary: someone went somewhere on some day.") for i in range(4)]
    check = {c.name: c for c in context_checks(summaries, metrics, (), True, {}, TH["context"])}["gold_strings"]
    assert check.status == "fail" and check.value == 0.0
    dated = [_pred(0, "On May 3, 2024 Henry Reed arrived.", gold=["Henry Reed", "2024-05-03"])]
    check = {c.name: c for c in context_checks(dated, metrics, (), True, {}, TH["context"])}["gold_strings"]
    assert check.value == 1.0 and check.status == "ok"  # a date is found in another format
    free = {c.name: c for c in context_checks(summaries, metrics, (), False, {}, TH["context"])}["gold_strings"]
    assert free.status == "not_measured" and "figure only" in free.message  # free-text gold: reported only


def test_gold_strings_is_the_share_in_the_contexts_not_a_ratio_to_gold_unit_recall() -> None:
    """EpBench GraphRAG's shape: contexts name almost no gold unit (recall 0.06) and hold 10% of the
    gold strings; as a ratio to recall that read "ok 1.82", as a share it fails."""
    metrics = {"retrieval": {"overall": {"gold_recall": 0.06, "n_with_gold": 20}}}
    preds = [_pred(i, "Henry Reed met someone." if i < 2 else "A community summary of themes.") for i in range(20)]
    check = {c.name: c for c in context_checks(preds, metrics, (), True, {}, TH["context"])}["gold_strings"]
    assert check.value == 0.1 and check.status == "fail", check
    assert "2 of 20 (10%)" in check.message and "gold-unit recall 0.06" in check.message


def test_contexts_quoting_units_beyond_the_cap_are_flagged() -> None:
    # the cap audit the harness records per prediction: units whose own text the context quotes
    # although the method did not report them (so the cap never counted them)
    def audited(i: int, beyond: list[str]) -> dict[str, Any]:
        return _pred(i, f"context {i}", cap_audit={"verbatim_units": ["1", *beyond], "verbatim_beyond_units": beyond,
                                                   "uncapped_tokens": None, "uncapped_share": None})

    def beyond(preds: list[dict[str, Any]]) -> Any:
        return {c.name: c for c in context_checks(preds, {}, (), True, {}, TH["context"])}["beyond_cap"]

    clean = beyond([audited(i, []) for i in range(8)])
    assert (clean.status, clean.value) == ("ok", 0.0)
    one = beyond([audited(i, ["7", "9"] if i == 3 else []) for i in range(8)])
    assert one.status == "warn" and one.value == pytest.approx(1 / 8, abs=1e-4)
    assert "e.g. q3: 2 more (7, 9)" in one.message
    assert beyond([audited(i, ["7"] if i < 4 else []) for i in range(8)]).status == "fail"
    unaudited = beyond([_pred(i, "context") for i in range(8)])
    assert unaudited.status == "not_measured" and unaudited.value is None  # runs made before the audit


def test_contexts_from_a_packages_fallback_are_counted() -> None:
    # HippoRAG 2 answers from dense passage retrieval when its recognition memory keeps no fact;
    # its worker records the reason per question (methods/external/workers/hipporag2_worker.py)
    dense = "dense passage retrieval (recognition memory kept no fact)"

    def fallback(reasons: list[str | None]) -> Any:
        preds = [_pred(i, f"context {i}", retrieval={"fallback": r, "recognition": {"facts_kept": 0 if r else 2}})
                 for i, r in enumerate(reasons)]
        return {c.name: c for c in context_checks(preds, {}, (), True, {}, TH["context"])}["fallback"]

    assert (fallback([None] * 10).status, fallback([None] * 10).value) == ("ok", 0.0)
    two = fallback([dense, dense] + [None] * 8)
    assert two.status == "warn" and two.value == pytest.approx(0.2) and dense in two.message
    every = fallback([dense] * 10)
    assert every.status == "fail" and "10 of 10 (100%)" in every.message
    weight = "dense passage retrieval (the graph search failed its weight check)"
    mixed = fallback([dense] * 5 + [weight] * 2 + [None] * 3)  # each reason named, with its count
    assert f"(5: {dense}; 2: {weight})" in mixed.message
    unrecorded = {c.name: c for c in context_checks([_pred(i, "c") for i in range(4)], {}, (), True, {},
                                                   TH["context"])}["fallback"]
    assert unrecorded.value is None and "no prediction records" in unrecorded.message


def test_cognees_graph_text_from_other_sessions_is_flagged_in_a_shipped_run() -> None:
    # conv-30's first 8 sessions: two of cognee's 12 contexts carry node text copied from a
    # session the method did not report (the bundle's NOTES counted them as beyond the cap)
    root = Path(__file__).resolve().parents[1] / "results" / "locomo-conv30-first8-local" / "runs"
    (run,) = root.glob("*/cognee-*")
    check = _by_name(run_health(run, TH))["beyond_cap"]
    assert check.status == "warn" and check.value == pytest.approx(2 / 12, abs=1e-3)


def test_one_unit_in_nearly_every_context_is_a_hub() -> None:
    def hub(preds: list[dict[str, Any]], units: dict[str, int]) -> Any:
        return {c.name: c for c in context_checks(preds, {}, (), True, units, TH["context"])}["hub_unit"]

    spread = [_pred(i, f"c{i}", context_chapters=[str((i + k) % 19) for k in range(5)]) for i in range(40)]
    even = hub(spread, {"book": 19})
    assert even.status == "ok" and even.value <= 12 / 40  # 40 contexts of 5 over 19 units: 10-11 each, at most 12
    hubbed = [_pred(i, f"c{i}", context_chapters=["17", *[str((i + k) % 16) for k in range(4)]]) for i in range(40)]
    worst = hub(hubbed, {"book": 19})
    assert worst.status == "fail" and worst.value == 1.0 and "unit 17 of book is in 40 of the 40 contexts" in worst.message
    four_in_five = [_pred(i, f"c{i}", context_chapters=(["17"] if i % 5 else []) + [str(i % 16)]) for i in range(40)]
    assert hub(four_in_five, {"book": 19}).status == "warn"
    # not measurable: one question per haystack (LongMemEval), and contexts of more than half the corpus
    single = [{**_pred(i, "c", context_chapters=["s1"]), "corpus_id": f"hay{i}"} for i in range(40)]
    assert hub(single, {f"hay{i}": 3 for i in range(40)}).value is None
    assert hub(hubbed, {"book": 8}).value is None


def test_contexts_that_name_dated_sessions_but_show_no_date() -> None:
    def dates(preds: list[dict[str, Any]], known: dict[str, dict[str, str]] | None) -> Any:
        return {c.name: c for c in context_checks(preds, {}, (), True, {}, TH["context"], known)}["unit_dates"]

    known = {"book": {"1": "2023-01-20", "2": "2023-01-29"}, "hay": {"s1": "2023-05-20"}}
    shown = [_pred(0, "Session 1 (4:04 pm on 20 January, 2023)\nJon: lost my job", context_chapters=["1"]),
             _pred(1, "[F2] from: 2 (January 29, 2023) Gina opened her store", context_chapters=["2", "1"]),
             {**_pred(2, "### Session s1 (2023/05/20 (Sat) 02:21)\nuser: hi", context_chapters=["s1"]),
              "corpus_id": "hay"}]
    assert dates(shown, known).status == "ok" and dates(shown, known).value == 0.0
    # the turns without their session's header; a date that is another session's; an undated corpus
    dropped = [_pred(i, "Jon: lost my job yesterday. Gina: the 29 January 2023 sale", context_chapters=["1"])
               for i in range(4)]
    check = dates(shown + dropped, known)
    assert check.status == "fail" and check.value == round(4 / 7, 4) and "4 of 7" in check.message
    assert dates([_pred(0, "x", context_chapters=["7"])], known).value is None  # unit without a date
    assert dates(shown, None).value is None  # no benchmark data here: not measured, never "ok" by default


@pytest.mark.parametrize(("method", "status"), [("graphrag", "fail"), ("gsw", "fail"), ("embedding_rag", "ok"),
                                                ("seem", "ok"), ("vanilla", "ok")])
def test_v1_locomo_contexts_without_session_dates(method: str, status: str, data_dir: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # v1's LoCoMo runs: GraphRAG's text units had no session title, GSW's entity summaries (before
    # issue 26's unit dates) no date, in every context; the others show the sessions' headers
    monkeypatch.setenv("MEMEVAL_DATA", str(data_dir))
    check = _by_name(run_health(v1_run("locomo-local", method), TH))["unit_dates"]
    assert check.status == status, check.message
    assert check.value == (1.0 if status == "fail" else 0.0)


@pytest.mark.parametrize(("method", "status"), [("hipporag2", "fail"), ("graphrag", "fail"), ("lightrag", "fail"),
                                                ("embedding_rag", "ok"), ("gsw", "ok"), ("vanilla", "not_measured")])
def test_v1_locomo_graph_packages_served_the_same_sessions_to_every_question(method: str, status: str) -> None:
    # v1's LoCoMo runs (0.5B index, conv-30's 19 sessions, 5 per context): HippoRAG 2's graph had
    # nodes in 4 sessions and put session 17 in 101 of 105 contexts; GraphRAG's one session in 103;
    # LightRAG's only source was session 18 (82 contexts; the other 23 were its no-context string).
    # Embedding RAG and GSW spread theirs (at most 57 of 105).
    check = _by_name(run_health(v1_run("locomo-local", method), TH))["hub_unit"]
    assert check.status == status
    if method == "vanilla":
        assert check.value is None  # the whole conversation in every context, by design


# -- answers -----------------------------------------------------------------------------------
def test_a_looping_answer_is_flagged() -> None:
    th = TH["answer"]
    assert loop("1. Hazel Lewis\n2. Chris Castillo\n3. Hazel Lewis\n4. Hazel Lewis", 3, 12)
    assert loop("Henry Reed, Henry Reed, Henry Reed, Zoe Brown", 3, 12)
    words = "the parkour workshop was set to begin soon and an eerie silence hung over the park"
    assert loop(f"{words}. Then {words}.", 3, 12)
    assert loop("Hazel Lewis, Chris Castillo and Henry Reed went on May 3, 2024, June 3, 2024 and July 3, 2024.",
                3, 12) is None  # three dates of one year are three items, not a loop on "2024"
    preds = [_pred(i, "c", answer="Henry Reed, Henry Reed, Henry Reed" if i < 4 else "Henry Reed") for i in range(10)]
    check = {c.name: c for c in answer_checks(preds, (), th)}["looping_answers"]
    assert check.value == 0.4 and check.status == "fail" and "q0" in check.message


def test_answers_equal_to_the_prompt_example_and_refusals() -> None:
    preds = [_pred(i, "c", answer="The week before 9 June 2023." if i < 2 else "Henry Reed") for i in range(10)]
    preds.append(_pred(10, "c", answer="Not mentioned in the conversation", gold=["Not mentioned in the conversation"]))
    preds.append(_pred(11, "c", answer="I cannot find it in the material."))
    checks = {c.name: c for c in answer_checks(preds, ("the week before 9 June 2023",), TH["answer"])}
    assert checks["prompt_example_answers"].value == pytest.approx(2 / 12, abs=1e-4)
    assert checks["prompt_example_answers"].status == "fail"
    # the declined category-5-like question is not answerable; the other decline counts
    assert checks["refusals"].value == pytest.approx(1 / 11, abs=1e-4) and checks["refusals"].status == "ok"


def test_a_decline_in_the_models_own_voice_counts_and_a_claim_about_the_user_does_not() -> None:
    """The 1.5B's LongMemEval declines ("I'm sorry, but I don't have any ... suggestions") split at
    ", but" into two parts, and the shared refusal rule read only the first as one."""
    answers = ["I'm sorry, but I don't have any gardening tips for next spring.",
               "I'm sorry, but I don't have any information about the trips you took in the autumn. "
               "Could you please provide more details about what you want?",
               "You don't have any siblings.", "I don't have any pets.", "Sorry, but you moved to Lisbon."]
    preds = [_pred(i, "c", answer=a) for i, a in enumerate(answers)]
    check = {c.name: c for c in answer_checks(preds, (), TH["answer"])}["refusals"]
    assert check.value == pytest.approx(2 / 5, abs=1e-4) and check.status == "fail"


def test_every_declared_answer_prompt_example_is_in_its_answer_prompt() -> None:
    """Each answer prompt version's declared examples are in the messages that version sends."""
    from memeval.datasets.types import Question
    from memeval.evaluation.conversations.locomo import LoCoMoProtocol
    from memeval.evaluation.conversations.locomo_answer import ANSWER_PROMPT_VERSIONS
    from memeval.evaluation.conversations.longmemeval import LongMemEvalProtocol

    q = Question("q", "c", "When?", ("x",), (), {"question_date": "2023/05/01"})
    protocols = [(LongMemEvalProtocol(), {})] + [
        (LoCoMoProtocol(answer_prompt_version=v), {"answer_prompt_version": v}) for v in ANSWER_PROMPT_VERSIONS]
    for proto, settings in protocols:
        examples = type(proto).answer_examples(settings)
        assert examples
        sent = " ".join(m["content"] for m in proto.answer_messages(q, "CONTEXT"))
        for example in examples:
            assert example.lower() in sent.lower(), (type(proto).__name__, settings, example)


# -- judge -------------------------------------------------------------------------------------
def test_judge_kappa_grades_the_judges_raw_verdicts_not_the_grounded_credit(tmp_path: Path) -> None:
    """EpBench's grounded credit agrees with the matcher it is partly built from (kappa 0.92) while
    the judge itself is at chance (0.002): the check grades the judge, the credit is only reported."""
    block = {"credit": "grounded", "kappa": 0.92, "n_items": 267, "n_questions": 240,
             "other_credit": {"raw": {"kappa": 0.002, "n_items": 267, "n_questions": 240}}}
    checks = {c.name: c for c in judge_checks(tmp_path, {"agreement": block, "n_judge_failed": 3}, [{}] * 40,
                                             lambda j: True, TH["judge"])}
    kappa = checks["judge_kappa"]
    assert kappa.status == "fail" and kappa.value == 0.002, kappa
    assert "raw verdicts vs the deterministic matcher" in kappa.message
    assert "grounded credit agrees with the matcher at kappa 0.92" in kappa.message and "not graded" in kappa.message
    assert checks["judge_failures"].status == "fail"
    assert checks["judge_false_accepts"].status == "not_measured" and checks["judge_false_accepts"].value is None
    assert checks["judge_label_kappa"].status == "not_measured"
    # a raw-credit run: the block is the judge's own; the gold items the matcher finds absent and the
    # judge credited are counted from the judgments that carry the matcher
    raw = {"credit": "raw", "kappa": 0.5, "n_items": 30, "n_questions": 30}
    lines = [{"matching_score": [1.0, 0.5, 0.0], "deterministic": {"matching_score": [0.0, 0.0, 0.0]}}] * 4
    checks = {c.name: c for c in judge_checks(tmp_path, {"agreement": raw}, lines, lambda j: True, TH["judge"])}
    assert checks["judge_kappa"].value == 0.5 and checks["judge_kappa"].status == "ok"
    assert "the judge credited 8 of 12 (67%) gold items the matcher finds absent" in checks["judge_kappa"].message
    assert "headline" not in checks["judge_kappa"].message  # raw credit: nothing reported beside


def test_judge_kappa_from_judgments_when_the_metrics_hold_no_raw_agreement(tmp_path: Path) -> None:
    """A custom run's block holds only the grounded credit: the judgments' raw credit vs their
    matcher credit is read instead; too few items is not measured, never "ok"."""
    lines = [{"matching_score": [1.0, 1.0], "deterministic": {"matching_score": [1.0, 0.0]}} for _ in range(12)]
    metrics = {"agreement": {"credit": "grounded", "kappa": 1.0, "n_items": 24, "n_questions": 12}}
    kappa = {c.name: c for c in judge_checks(tmp_path, metrics, lines, lambda j: True, TH["judge"])}["judge_kappa"]
    assert kappa.status == "fail" and kappa.value == 0.0  # the judge credits every item: chance, whatever grounding did
    lines += [{"matching_score": [0.0], "deterministic": {"matching_score": [0.0]}} for _ in range(6)]
    kappa = {c.name: c for c in judge_checks(tmp_path, metrics, lines, lambda j: True, TH["judge"])}["judge_kappa"]
    # 30 items: 18 agree; chance (24 * 12 + 6 * 18) / 900 = 0.44; kappa (0.6 - 0.44) / 0.56
    assert kappa.status == "warn" and kappa.value == pytest.approx(0.16 / 0.56, abs=1e-4), kappa
    assert "the judge credited 12 of 18 (67%)" in kappa.message
    few = {c.name: c for c in judge_checks(tmp_path, metrics, lines[-8:], lambda j: True, TH["judge"])}["judge_kappa"]
    assert few.status == "not_measured" and "too few items" in few.message


def test_judge_kappa_on_verdicts_and_the_hand_labels(tmp_path: Path) -> None:
    from memeval.evaluation.conversations.locomo import JUDGE_PROMPTS, LoCoMoProtocol

    agree = [{"question_id": f"q{i}", "category": 1, "correct": i % 2, "grounded": bool(i % 2)} for i in range(30)]
    rule = [{"question_id": f"r{i}", "category": 5, "judge_prompt": JUDGE_PROMPTS[2], "correct": 1, "grounded": False}
            for i in range(30)]  # category 5 by the decline check: left out, or it would pull kappa down
    checks = {c.name: c for c in judge_checks(tmp_path, {}, agree + rule, LoCoMoProtocol.judge_called, TH["judge"])}
    assert checks["judge_kappa"].value == 1.0 and "30 items" in checks["judge_kappa"].message
    lax = [{**j, "correct": 1} for j in agree]  # the judge accepts every answer the check rejects
    kappa = {c.name: c for c in judge_checks(tmp_path, {}, lax, lambda j: True, TH["judge"])}["judge_kappa"]
    assert (kappa.status, kappa.value) == ("fail", 0.0)
    assert "the judge accepted 15 of 15 (100%) answers the grounding check rejects" in kappa.message
    blank = {c.name: c for c in judge_checks(tmp_path, {}, [], lambda j: True, TH["judge"])}["judge_kappa"]
    assert blank.status == "not_measured" and blank.value is None  # nothing rated: not "ok"
    _write_json(tmp_path / "judge_check.json", {"false_accept_rate": 0.4, "n_known_wrong": 20,
                                                "judge": "1.5B", "overall": {"raw": {"kappa": 0.15, "n_credits": 43}}})
    checks = {c.name: c for c in judge_checks(tmp_path, {}, agree, lambda j: True, TH["judge"])}
    assert checks["judge_false_accepts"].value == 0.4 and checks["judge_false_accepts"].status == "fail"
    assert checks["judge_label_kappa"].value == 0.15 and checks["judge_label_kappa"].status == "fail"
    assert "hand labels: kappa 0.15, 43 labels (1.5B)" in checks["judge_label_kappa"].message


def test_unmeasured_checks_say_so_in_every_table_and_old_files_read_as_meant_now(tmp_path: Path) -> None:
    from memeval.evaluation.health.table import markdown, rows, side_by_side
    from memeval.evaluation.runs.health_file import Check, Health

    health = Health([Check("judge_false_accepts", "judge", "not_measured", None, {"warn": 0.1}, "none measured"),
                     Check("judge_failures", "judge", "ok", 0.0, {"warn": 0.0}, "0 failed")])
    table = markdown(rows("run", health))
    assert "| judge_false_accepts | not measured | - |" in table and "| judge_failures | ok | 0.000 |" in table
    assert "| not measured |" in side_by_side([("run", health)]) and health.mark() == "ok"
    old = {"format": 2, "checks": [
        {"name": "judge_false_accepts", "scope": "judge", "status": "ok", "value": None, "threshold": {},
         "message": "not measured"},
        {"name": "gold_strings", "scope": "context", "status": "ok", "value": 1.8227, "threshold": {},
         "message": "27 of 268 (10%) gold answer strings in the context, 1.82 of what its gold-unit recall claims"},
        {"name": "judge_kappa", "scope": "judge", "status": "ok", "value": 0.917, "threshold": {},
         "message": "kappa 0.92 vs the deterministic matcher (grounded credit), 267 items"},
        {"name": "judge_kappa", "scope": "judge", "status": "warn", "value": 0.29, "threshold": {},
         "message": "kappa 0.29 vs the grounding check, 81 items"},
        {"name": "judge_kappa", "scope": "judge", "status": "ok", "value": 0.47, "threshold": {},
         "message": "kappa 0.47 vs the grounding check on only 12 items: reported, not judged"}]}
    _write_json(tmp_path / "health.json", old)
    back = read_health(tmp_path)
    assert back is not None
    assert [c.status for c in back.checks] == ["not_measured", "not_measured", "not_measured", "warn", "not_measured"]
    assert back.checks[1].value is None and "27 of 268 (10%)" in back.checks[1].message
    assert "grounded credit against the matcher, not the judge" in back.checks[2].message
    assert back.to_dict()["format"] == 3 and back.status == "warn"


# -- index counters ----------------------------------------------------------------------------
def _gsw_chapter(folder: Path, ch: str, entities: list[str], dated: bool = True) -> None:
    ents = {f"e{i}": {"id": f"e{i}", "name": n, "roles": [], "chunks": [f"{ch}.0"],
                      "summaries": {ch: f"{n} was there."}} for i, n in enumerate(entities)}
    nodes = {"t1": {"id": "t1", "kind": "time", "history": [{"value": "May 3, 2024", "chunk": f"{ch}.0"}] if dated else [],
                    "entities": list(ents)}}
    _write_json(folder / "chapters" / f"{ch}.json", {
        "format": "gsw-workspace/2", "chapters": [ch], "entities": ents, "verbs": {}, "nodes": nodes,
        "chunks": [{"id": f"{ch}.0", "chapter": ch, "text": " ".join(entities), "guard": {}}]})


def test_gsw_counters_find_empty_chapters_and_sentence_names(tmp_path: Path) -> None:
    from memeval.methods.gsw.method import GSW

    _gsw_chapter(tmp_path, "1", ["Henry Reed", "He", "Adrenaline coursed through his veins", "High Line"])
    _gsw_chapter(tmp_path, "2", [], dated=False)
    c = GSW.index_counters(tmp_path)
    assert c is not None and c.units == 2
    assert c.empty == {"entities": [1, 2], "space_time": [1, 2], "summaries": [1, 2]}
    assert (c.names, c.names_not_noun_phrase) == (4, 2)
    checks = {x.name: x for x in index_checks({"extracts": True, "corpora": {"book": c.to_dict()}}, TH["index"])}
    assert checks["units_empty"].status == "warn" and checks["units_empty"].value == 0.5
    assert checks["names_not_noun_phrase"].status == "fail" and checks["names_not_noun_phrase"].value == 0.5


def test_seem_counters_report_frames_without_events_and_merges_against_their_reason(tmp_path: Path) -> None:
    from memeval.methods.seem.method import SEEM

    event = {"participants": ["Jon"], "action": "opens a dance studio", "time_raw": "", "location": ""}
    frames = [{"id": "F1", "summary": "s", "events": [event], "provenance": ["1", "2", "3"]},
              {"id": "F4", "summary": "s", "events": [], "provenance": ["4"]},
              {"id": "F5", "summary": "s", "events": [{**event, "action": "starts a job at Harbour Bakery"}],
               "provenance": ["5"]}]
    decisions = [{"new": "F2", "existing": "F1", "merged": True, "reason": "Frame B describes the same event."},
                 {"new": "F3", "existing": "F1", "merged": True,
                  "reason": "Frame B describes a different event, even though the people are the same."}]
    _write_json(tmp_path / "memory.json", {"frames": frames, "decisions": decisions})
    _write_json(tmp_path / "graph.json", {"facts": [{"subject": "Jon", "predicate": "opens", "object": "studio",
                                                     "passage": "1"}], "names": ["Jon", "studio", "with"]})
    c = SEEM.index_counters(tmp_path)
    assert c is not None and c.units == 3
    assert c.empty == {"events": [1, 3], "facts": [4, 5]}
    assert c.extra["fusion"]["merged"] == 2 and c.extra["fusion"]["contradicting"] == 1
    assert c.example_copies == 1  # the frame prompt's invented "Harbour Bakery"
    checks = {x.name: x for x in index_checks({"extracts": True, "corpora": {"c": c.to_dict()}}, TH["index"])}
    assert checks["contradicting_merges"].value == 0.5 and checks["contradicting_merges"].status == "warn"
    assert "different event" in checks["contradicting_merges"].message
    assert checks["units_empty"].status == "fail"  # 4 of 5 passages without a fact


def test_lightrag_counters_read_entities_and_relations_per_document(tmp_path: Path) -> None:
    from memeval.methods.external.lightrag import LightRAGMethod

    pkg = tmp_path / "package"
    docs = {str(i): {"content": f"Chapter {i}. Henry Reed met Zoe Brown."} for i in range(1, 5)}
    entities = {str(i): {"entity_names": [], "count": 0} for i in range(1, 5)}
    entities["1"] = {"entity_names": ["Henry Reed", "Person"], "count": 2}
    relations = {str(i): {"relation_pairs": [], "count": 0} for i in range(1, 5)}
    relations["1"] = {"relation_pairs": [["Henry Reed", "Person"]], "count": 1}
    for name, obj in (("kv_store_full_docs", docs), ("kv_store_full_entities", entities),
                      ("kv_store_full_relations", relations)):
        _write_json(pkg / f"{name}.json", obj)
    c = LightRAGMethod.index_counters(tmp_path)
    assert c is not None and c.empty == {"entities": [3, 4], "relations": [3, 4]}
    assert c.example_copies == 1 and c.copy_samples == ["Person"]  # an entity type written as a name
    checks = {x.name: x for x in index_checks({"extracts": True, "corpora": {"c": c.to_dict()}}, TH["index"])}
    assert checks["units_empty"].status == "fail" and checks["example_copies"].status == "fail"


def test_graphrag_counters_from_totals_are_a_lower_bound_and_from_tables_exact(tmp_path: Path) -> None:
    from memeval.methods.external.graphrag import GraphRAGMethod

    _write_json(tmp_path / "index_done.json", {"index": {"counts": {"text_units": 19, "entities": 38,
                                                                    "relationships": 2, "communities": 1}}})
    c = GraphRAGMethod.index_counters(tmp_path)
    assert c is not None and c.empty["relationships"] == [17, 19] and c.at_least == ["entities", "relationships"]
    check = index_checks({"extracts": True, "corpora": {"c": c.to_dict()}}, TH["index"])[0]
    assert check.status == "fail" and "at least 17 of 19" in check.message

    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    out = tmp_path / "package" / "output"
    out.mkdir(parents=True)
    pd.DataFrame({"id": ["u1", "u2", "u3"]}).to_parquet(out / "text_units.parquet")
    pd.DataFrame({"title": ["HENRY REED", "HE"], "text_unit_ids": [["u1"], ["u1", "u2"]]}).to_parquet(
        out / "entities.parquet")
    pd.DataFrame({"text_unit_ids": [["u1"]]}).to_parquet(out / "relationships.parquet")
    c = GraphRAGMethod.index_counters(tmp_path)
    assert c is not None and c.empty == {"entities": [1, 3], "relationships": [2, 3]} and not c.at_least
    assert (c.names, c.names_not_noun_phrase) == (2, 1)

    # the package's invented example names written into a conversation's index (LoCoMo's 0.5B
    # index: "Gina ... has been held in Tiruzia's Alhamia Prison"); one the text has is no copy
    pd.DataFrame({"id": ["u1", "u2"], "text": ["Gina: I opened my store.", "Jon: the Unity March was fun."]}).to_parquet(
        out / "text_units.parquet")
    pd.DataFrame({"title": ["GINA", "AURELIA"], "text_unit_ids": [["u1"], ["u2"]],
                  "description": ["Gina was held in Tiruzia's Alhamia Prison.", "A country"]}).to_parquet(
        out / "entities.parquet")
    pd.DataFrame({"text_unit_ids": [["u2"]], "description": ["Jon went to the Unity March"]}).to_parquet(
        out / "relationships.parquet")
    pd.DataFrame({"full_content": ["# Gina's store\nThe community revolves around the Verdant Oasis Plaza."]}).to_parquet(
        out / "community_reports.parquet")
    c = GraphRAGMethod.index_counters(tmp_path)
    assert c is not None and (c.example_copies, c.values) == (3, 6)
    assert sorted(c.copy_samples) == ["Aurelia", "Tiruzia", "Verdant Oasis Plaza"]


def test_hipporag2_counters_find_the_one_shot_example_copied(tmp_path: Path) -> None:
    from memeval.methods.external.hipporag2 import HippoRAG2Method

    docs = [{"idx": "a", "passage": "Jon met Gina.", "extracted_entities": ["Jon", "Gina", "3 July 2001", "Hindi"],
             "extracted_triples": [["Jon", "located in", "India"]]},
            {"idx": "b", "passage": "Gina speaks Hindi.", "extracted_entities": ["Hindi"], "extracted_triples": []},
            {"idx": "c", "passage": "Nothing.", "extracted_entities": [], "extracted_triples": []}]
    _write_json(tmp_path / "package" / "openie_results_ner_gpt-4o-mini.json", {"docs": docs})
    c = HippoRAG2Method.index_counters(tmp_path)
    assert c is not None and c.empty == {"entities": [1, 3], "triples": [2, 3]}
    assert c.example_copies == 3  # "3 July 2001", "Hindi" and "India" where the passage lacks them
    # the share's base is every value the copies were counted over (5 entities, 3 triple values),
    # not the entity names alone: over names alone, LoCoMo's run read 60 copies of 47 (1.28)
    assert c.values == 8
    [copies] = [k for k in index_checks({"extracts": True, "corpora": {"x": c.to_dict()}}, TH["index"])
                if k.name == "example_copies"]
    assert copies.value == round(3 / 8, 4) and "(8 stored values)" in copies.message


def test_names_that_are_not_noun_phrases() -> None:
    for bad in ("He", "Adrenaline coursed through his veins", "His fingers twitched", "keep it up",
                "Rome wasn't built in a day", "super stoked!", "with",
                "Queensboro Bridge suddenly feeling less like a celebration and more like a crime scene"):
        assert name_problem(bad), bad
    for good in ("Henry Reed", "St. Patrick's Cathedral", "American Museum of Natural History", "weathered planks",
                 "May 11, 2026", "the building in the park", "Dresses spun from starlight"):
        assert name_problem(good) is None, good


# -- the run as a whole ------------------------------------------------------------------------
def test_health_json_is_written_and_read_back_and_a_bundle_finds_its_index(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    _gsw_chapter(bundle / "indexes" / "gsw-abc" / "book", "1", ["Henry Reed", "He"])
    run = make_run(bundle, [_pred(i, f"ctx {i}") for i in range(4)], method="memeval.methods.gsw.method.GSW",
                   index_folder="runs/_indexes/gsw-abc")
    assert index_folder(run, "runs/_indexes/gsw-abc") == bundle / "indexes" / "gsw-abc"
    health = write_health(run, TH)
    back = read_health(run)
    assert back is not None and back.to_dict() == health.to_dict()
    names = _by_name(back)
    assert names["names_not_noun_phrase"].value == 0.5
    assert {c.scope for c in back.checks} == {"index", "context", "answer", "judge"}


def test_a_same_named_index_folder_of_another_dataset_under_the_working_directory_is_passed_over(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a bundle's runs checked from the project root: runs/_indexes/gsw-abc there holds another
    # dataset's corpus (one index folder per parameter set), and reading it left the index unchecked
    cwd = tmp_path / "project"
    (cwd / "runs" / "_indexes" / "gsw-abc" / "conv-30").mkdir(parents=True)
    monkeypatch.chdir(cwd)
    bundle = tmp_path / "bundle"
    _gsw_chapter(bundle / "indexes" / "gsw-abc" / "book", "1", ["Henry Reed", "He"])
    run = make_run(bundle, [_pred(0, "c")], method="memeval.methods.gsw.method.GSW", index_folder="runs/_indexes/gsw-abc")
    assert index_folder(run, "runs/_indexes/gsw-abc") == Path("runs/_indexes/gsw-abc")  # the first that exists
    assert index_folder(run, "runs/_indexes/gsw-abc", ("book",)) == bundle / "indexes" / "gsw-abc"
    assert _by_name(run_health(run, TH))["names_not_noun_phrase"].value == 0.5


def test_a_run_whose_recorded_index_folder_is_gone_finds_its_index_beside_the_runs(tmp_path: Path) -> None:
    """Regrades before 2026-12-05 recorded a scratch index folder, deleted when they ended."""
    _gsw_chapter(tmp_path / "runs" / "_indexes" / "gsw-abc" / "book", "1", ["Henry Reed", "He"])
    run = make_run(tmp_path, [_pred(0, "c")], method="memeval.methods.gsw.method.GSW",
                   index_folder="/tmp/regrade-gone/indexes/gsw-abc")
    assert index_folder(run, "/tmp/regrade-gone/indexes/gsw-abc") == tmp_path / "runs" / "_indexes" / "gsw-abc"
    assert _by_name(run_health(run, TH))["names_not_noun_phrase"].value == 0.5


def test_an_index_only_run_gets_the_index_checks_from_the_command(tmp_path: Path, capsys: Any) -> None:
    """`stages=[index]` (an index-health probe) leaves no metrics.json: the command checks its
    index instead of refusing it, and a folder with neither file is still refused."""
    from memeval.cli.health import main

    _gsw_chapter(tmp_path / "runs" / "_indexes" / "gsw-abc" / "book", "1", ["Henry Reed", "He"])
    run = make_run(tmp_path, [], method="memeval.methods.gsw.method.GSW", index_folder="runs/_indexes/gsw-abc")
    for name in ("metrics.json", "predictions.jsonl", "judgments.jsonl"):
        (run / name).unlink()
    assert main([str(run)]) == 1  # half the names are not noun phrases: a failed index check
    back = read_health(run)
    assert back is not None and {c.scope for c in back.checks} == {"index"}
    assert _by_name(back)["names_not_noun_phrase"].value == 0.5
    (run / "index.json").unlink()
    assert main([str(run)]) == 2 and "no index.json" in capsys.readouterr().err


def test_a_method_without_counters_is_trivially_ok_and_a_missing_index_warns(tmp_path: Path) -> None:
    run = make_run(tmp_path / "a", [_pred(0, "c")])
    assert _by_name(run_health(run, TH))["extraction"].status == "ok"
    run = make_run(tmp_path / "b", [_pred(0, "c")], method="memeval.methods.gsw.method.GSW", index_folder="nowhere/gsw-x")
    assert _by_name(run_health(run, TH))["extraction"].status == "warn"


def test_the_command_loads_the_thresholds_hydra_composes() -> None:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from memeval.harness.schema import register_schemas

    register_schemas()
    with initialize_config_dir(config_dir=str(Path(__file__).resolve().parents[1] / "conf"), version_base=None):
        cfg = compose("config")
    assert OmegaConf.to_container(cfg.health, resolve=True) == TH
    for scope in ("context", "answer", "judge", "index"):
        assert all(isinstance(v, dict | int) for v in TH[scope].values()), scope


def test_memeval_health_prints_one_table_and_fails_on_a_failed_check(tmp_path: Path, capsys) -> None:
    from memeval.cli.commands import COMMANDS

    run = make_run(tmp_path, [_pred(i, REFUSAL) for i in range(5)], method=LIGHTRAG)
    assert COMMANDS["health"].main([str(run)]) == 1
    out = capsys.readouterr().out
    assert "| run | scope | check | status | value | threshold | message |" in out
    assert "| empty_contexts | fail |" in out and (run / "health.json").exists()


def test_side_by_side_puts_each_check_on_one_row_with_a_column_per_run(tmp_path: Path, capsys) -> None:
    from memeval.cli.commands import COMMANDS

    bad = make_run(tmp_path / "a", [_pred(i, REFUSAL) for i in range(5)], method=LIGHTRAG)
    bad = bad.rename(bad.with_name("lightrag-0000000001"))
    good = make_run(tmp_path / "b", [_pred(i, f"context {i} about the harbour") for i in range(5)])
    assert COMMANDS["health"].main([str(bad), str(good), "--side-by-side", "--no-write"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"| scope | check | threshold | {bad.name} | {good.name} |"
    (row,) = [x for x in lines if x.startswith("| context | empty_contexts |")]
    assert row.endswith("| fail 1.000 | ok 0.000 |"), row
    scopes = [x.split(" | ")[0].lstrip("| ") for x in lines[2:] if x.startswith("| ")]
    assert scopes == sorted(scopes, key=("index", "context", "answer", "judge").index)
    assert not (bad / "health.json").exists()


@pytest.mark.parametrize("bundle", ["epbench20-local", "locomo-local"])
def test_the_v1_bundles_say_what_issue_24_found(bundle: str) -> None:
    """On the v1 bundles' runs (tests/fixtures/v1_bundles; read, nothing written): LightRAG and
    GraphRAG fail a context or index check; Vanilla and Embedding RAG pass every context check;
    SEEM reports its fusion."""
    runs = sorted((v1_bundle(bundle) / "runs").glob("*/*"))
    assert runs
    for run in runs:
        health = run_health(run, TH)
        method = run.name.split("-")[0]
        scopes = {c.scope for c in health.failed}
        if method in ("lightrag", "graphrag"):
            assert scopes & {"context", "index"}, (run.name, health.mark())
        if method in ("vanilla", "embedding_rag"):
            assert all(c.status != "fail" for c in health.checks if c.scope == "context"), run.name
        if method == "seem":
            assert {"fusion_merge_rate", "contradicting_merges"} <= set(_by_name(health))


def test_a_saved_config_gets_todays_thresholds_for_checks_added_after_it() -> None:
    """A run saved before a check existed (mem0's EpBench run predates source_copies) is replayed
    with that check's current threshold; the thresholds it saved stay as saved."""
    from memeval.evaluation.runs.upgrade import upgrade_config

    saved = {"health": {"index": {"empty": {"warn": 0.3, "fail": 0.9}}}}
    health = upgrade_config(saved).health
    assert health.index.empty.warn == 0.3 and health.index.empty.fail == 0.9
    assert health.index.source_copies.fail == TH["index"]["source_copies"]["fail"]
    assert health.judge.kappa.warn == TH["judge"]["kappa"]["warn"]
    assert upgrade_config({"method": {"name": "x"}}).get("health") is None


def test_memeval_health_on_a_bundled_run_checks_it_and_leaves_its_files(capsys) -> None:
    # a bundle's run folder is the bundle's: writing health.json there changed a shipped file
    # (and left a lock beside it) under manifest.json's digests
    from memeval.cli import health as health_cli

    run = v1_run("epbench20-local", "vanilla")  # a bundle's run folder (beside the bundle's manifest.json)
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    health_cli.main([str(run)])
    out = capsys.readouterr()
    assert "a bundled run: checked, health.json not written" in out.err
    assert f"| {run.name} | index |" in out.out or f"| {run.name} | context |" in out.out
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before


def test_hedged_answers_are_short_answers_offering_alternatives() -> None:
    from memeval.evaluation.health.answer import hedges

    assert hedges("July 15 or 16, 2023", "When did she move?")
    assert hedges("Counseling or mental health.", "What field is she going into?")
    assert not hedges("Pottery or painting.", "Does she prefer pottery or painting?")  # the question asks for a choice
    assert not hedges("She went hiking, whether or not it rained, on a long trail across the hills that day.",
                      "What did she do?")  # a long sentence, not a hedge
    assert not hedges("Whether she goes or not is open.", "Will she go?")  # "or not" offers no alternative
    assert not hedges("In 2021.", "When?")
