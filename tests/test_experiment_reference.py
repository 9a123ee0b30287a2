"""Each experiment with a reference (conf/experiment/paper.yaml: the GSW paper; seem_paper.yaml:
SEEM's) names every way a run departs from it, refuses a run it does not hold, and chooses the
EpBench judge's input (judge version 3: the question's type) the reference judged with."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from omegaconf import OmegaConf

from memeval.evaluation.epbench.behaviour import EpBenchBehaviour
from memeval.evaluation.epbench.judge import judge_messages, judge_one, typed_judge_messages
from memeval.evaluation.epbench.judging import EpBenchJudging
from memeval.evaluation.protocol import experiment_line
from memeval.harness.estimate import compose
from memeval.harness.experiment import installed_versions, output_guard, scoring_facts
from memeval.harness.reference import check_scope, deviations, experiments_covering
from memeval.model_access.errors import ConfigError


def _ref(experiment: str) -> dict[str, Any]:
    return OmegaConf.to_container(compose([f"+experiment={experiment}"]).experiment.reference, resolve=True)


def _gsw_as_paper() -> dict[str, Any]:
    ref = _ref("paper")
    return {"answer_model": "gpt-4o-2024-08-06", "judge_model": "gpt-4o-2024-08-06", "subset": "all",
            "index_model": "gpt-4o-2024-08-06", "embedder": "voyage-3", "answer_with": "shared",
            "query_model": "gpt-4o-2024-08-06", "scoring": dict(ref["scoring"]),
            "settings": {"validate_kinds": False, "stop_repeats": False, "wire": "json"},
            "output_guard": "none", "package_versions": {}}


def test_a_gsw_run_as_the_paper_ran_it_has_no_deviation() -> None:
    assert deviations(_ref("paper"), "gsw", _gsw_as_paper()) == []
    assert deviations(_ref("paper"), "gsw_string_norerank", _gsw_as_paper()) == []  # Table 13 ablation: gsw's entry


# each departure alone, and the words its phrase must carry
DEPARTURES = [
    ({"scoring": {"policy": "lenient"}}, "scoring rule (policy) lenient, not the reference's harsh"),
    ({"scoring": {"pr_convention": "defined_only"}}, "P/R convention defined_only, not the reference's authors"),
    ({"scoring": {"judge_input": "question_text"}}, "judge input question_text, not the reference's question_type"),
    ({"scoring": {"judge_empties_items": "on_decline"}}, "judge empties the item list on_decline"),
    ({"scoring": {"gold_duplicates": "removed"}}, "duplicate gold items removed, not the reference's kept"),
    ({"scoring": {"credit": "grounded"}}, "credit grounded, not the reference's raw"),
    ({"settings": {"validate_kinds": True}}, "gsw validate_kinds true, not the reference's false"),
    ({"settings": {"stop_repeats": True}}, "gsw stop_repeats true, not the reference's false"),
    ({"settings": {"wire": "compact"}}, "gsw wire compact, not the reference's json"),
    ({"output_guard": "gsw-guard-3"}, "output guard gsw-guard-3 on"),
    ({"answer_model": "qwen"}, "answering model qwen, not the reference's gpt-4o-2024-08-06"),
]


@pytest.mark.parametrize(("change", "phrase"), DEPARTURES, ids=[p for _, p in DEPARTURES])
def test_each_departure_is_named_alone(change: dict[str, Any], phrase: str) -> None:
    actual = _gsw_as_paper()
    for key, value in change.items():
        actual[key] = {**actual[key], **value} if isinstance(value, dict) else value
    found = deviations(_ref("paper"), "gsw", actual)
    assert len(found) == 1, found
    assert phrase in found[0], found


def test_hipporag2_query_calls_and_package_version() -> None:
    ref = _ref("paper")
    actual = {**_gsw_as_paper(), "embedder": "nvidia/NV-Embed-v2", "answer_with": "package",
              "index_model": "gpt-4o-mini-2024-07-18", "settings": {}, "package_versions": {"hipporag": "2.0.0a4"}}
    found = deviations(ref, "hipporag2", actual)
    assert len(found) == 2, found
    assert "recognition filter" in found[0] and "on gpt-4o-2024-08-06, not the reference's gpt-4o-mini" in found[0]
    assert found[1] == "package hipporag==2.0.0a4 (the reference names no version)"
    named = {**ref, "methods": {**ref["methods"], "hipporag2": {**ref["methods"]["hipporag2"],
                                                                "package": {"name": "hipporag", "version": "2.0.0a4"}}}}
    assert not any(d.startswith("package ") for d in deviations(named, "hipporag2", actual))  # named and matching


def test_installed_package_versions_come_from_the_environment_locks() -> None:
    from memeval.methods.external.graphrag import GraphRAGMethod
    from memeval.methods.external.hipporag2 import HippoRAG2Method
    from memeval.methods.gsw.method import GSW

    assert installed_versions(HippoRAG2Method)["hipporag"] == "2.0.0a4"  # its --no-deps pin
    assert "graphrag" in installed_versions(GraphRAGMethod) and installed_versions(GSW) == {}
    assert output_guard(GSW).startswith("gsw-guard") and output_guard(HippoRAG2Method) == "none"


def test_the_epbench_protocol_states_its_judge_input_per_version() -> None:
    from memeval.evaluation.epbench.protocol import EpBenchProtocol

    fair, paper = EpBenchProtocol(), EpBenchProtocol(policy="harsh", judge_version=3, pr_convention="authors")
    assert scoring_facts(fair) == {"policy": "lenient", "credit": "raw", "pr_convention": "defined_only",
                                   "judge_input": "question_text", "judge_empties_items": "on_decline",
                                   "gold_duplicates": "removed"}
    assert scoring_facts(paper)["judge_input"] == "question_type"
    assert scoring_facts(paper)["judge_empties_items"] == "on_any_negative_statement"
    with pytest.raises(ValueError, match="one_pass"):
        EpBenchJudging("lenient", "two_pass", None, None, EpBenchBehaviour.from_versions(judge=3))


def test_seem_paper_composes_its_reference() -> None:
    cfg = compose(["+experiment=seem_paper", "method=seem", "dataset=locomo"])
    ref = OmegaConf.to_container(cfg.experiment.reference, resolve=True)
    assert cfg.experiment.name == "seem_paper" and cfg.subset.n is None
    assert ref["answer_model"] == "Qwen3-Next-80B-A3B-Instruct" and ref["scoring"] == {"credit": "raw"}
    assert ref["methods"]["seem"]["context_cap"] == "uncapped"
    assert any("top-k" in s for s in ref["silent"]) and any("judge model" in s for s in ref["silent"])
    local = {"answer_model": "qwen2.5", "judge_model": "j", "index_model": "qwen2.5", "embedder": "e",
             "answer_with": "shared", "subset": "all", "query_model": "qwen2.5", "scoring": {"credit": "grounded"},
             "context_cap": "5 units (derived)", "uncapped": False, "output_guard": "seem-guard-2",
             "settings": {"mode": "batch", "frame_retry": True, "fusion_veto_days": 3, "fusion_max_provenance": 8},
             "package_versions": {}}
    found = " | ".join(deviations(ref, "seem", local))
    for phrase in ("answering model qwen2.5, not the reference's Qwen3-Next-80B-A3B-Instruct",
                   "context cap 5 units (derived), not the reference's uncapped", "output guard seem-guard-2",
                   "seem frame_retry true", "seem fusion_veto_days 3", "credit grounded, not the reference's raw"):
        assert phrase in found, (phrase, found)
    assert "judge j" not in found  # the judge model is one of what the summary does not give


@pytest.mark.parametrize(("overrides", "hint"), [
    (["+experiment=paper", "method=seem", "dataset=epbench200"], "+experiment=seem_paper"),
    (["+experiment=paper", "method=gsw", "dataset=locomo"], "+experiment=fair"),
    (["+experiment=paper", "method=mem0", "dataset=epbench20"], "+experiment=fair"),
    (["+experiment=seem_paper", "method=seem", "dataset=epbench200"], "+experiment=fair"),  # no paper ran it
    (["+experiment=paper", "method=seem", "dataset=locomo"], "+experiment=seem_paper"),
    (["+experiment=seem_paper", "method=hipporag2", "dataset=locomo"], "+experiment=fair"),
])
def test_a_run_outside_its_reference_is_refused_naming_the_right_experiment(overrides: list[str], hint: str) -> None:
    with pytest.raises(ConfigError, match="not in the .* experiment's reference") as err:
        check_scope(compose(overrides))
    assert hint in str(err.value) and "\n" not in str(err.value)
    if "method=seem" in overrides and "+experiment=paper" in overrides:
        assert "+experiment=seem_paper" in str(err.value)  # SEEM's own paper is named either way


def test_runs_their_reference_holds_and_fair_runs_pass() -> None:
    for overrides in (["+experiment=paper", "method=gsw", "dataset=epbench200"],
                      ["+experiment=paper", "method=gsw_no_spacetime", "dataset=epbench20"],
                      ["+experiment=seem_paper", "method=seem_no_rpe", "dataset=longmemeval_s"],
                      ["method=seem", "dataset=locomo"], ["+experiment=fair", "method=mem0", "dataset=epbench200"]):
        check_scope(compose(overrides))
    assert list(experiments_covering("seem", "locomo")) == ["seem_paper"]
    assert list(experiments_covering("gsw", "epbench200")) == ["paper"]


def test_a_run_without_reference_says_so() -> None:
    line = experiment_line({"experiment": {"name": "fair"}})
    assert "no reference" in line and "paper" not in line.split(";", 1)[1]
    with_ref = experiment_line({"experiment": {"name": "seem_paper", "reference": "SEEM paper", "deviations": [],
                                               "silent": ["the judge model"]}})
    assert "reference: SEEM paper" in with_ref and "no deviation" in with_ref and "does not say: the judge model" in with_ref


class _Recorder:
    """A judge that records the messages it is sent and credits nothing."""

    display_name = "recorder"

    def __init__(self) -> None:
        self.sent: list[list[dict[str, str]]] = []

    async def complete_json(self, messages: list[dict[str, str]], model: Any, max_tokens: int) -> Any:
        self.sent.append(messages)
        parsed = model.model_validate({"identified_items": [], "matching_score": [0], "explanation": "x"})
        return parsed, type("R", (), {"cached": False})()


def test_judge_version_3_reads_the_type_and_version_2_is_unchanged() -> None:
    question, gold, answer = "Where did Ada Quill meet the potter?", ["Lantern Quay"], "At Lantern Quay."
    judge = _Recorder()
    asyncio.run(judge_one(judge, question, gold, answer, None, 2, question_type="Spaces"))  # type: ignore[arg-type]
    asyncio.run(judge_one(judge, question, gold, answer, None, 3, question_type="Spaces"))  # type: ignore[arg-type]
    v2, v3 = judge.sent
    assert v2 == judge_messages(question, gold, answer, None)  # old runs' requests, so their cache keys hold
    assert v3 == typed_judge_messages("Spaces", gold, answer, None)
    text = " ".join(m["content"] for m in v3)
    assert question not in text and "Spaces" in text and "negative" in text
    with pytest.raises(ValueError, match="question_type"):
        asyncio.run(judge_one(judge, question, gold, answer, None, 3))  # type: ignore[arg-type]


def test_saved_configs_keep_their_policy_and_judge_version() -> None:
    """A bundled EpBench run's config holds the literal policy and judge version it ran with; the
    experiment keys that now choose them are absent there and change nothing it reads."""
    from pathlib import Path

    from memeval.evaluation.runs.upgrade import upgrade_config

    saved = sorted((Path(__file__).resolve().parents[1] / "results").glob("*/runs/epbench20/*/config.yaml"))
    if not saved:
        pytest.skip("no bundled EpBench run")
    for path in saved:
        raw = OmegaConf.load(path)
        assert "policy" not in raw.experiment and "judge_versions" not in raw.experiment
        protocol = upgrade_config(raw).dataset.protocol
        assert (protocol.policy, protocol.judge_version) == (raw.dataset.protocol.policy,
                                                             raw.dataset.protocol.judge_version)
