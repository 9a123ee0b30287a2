"""LoCoMo's answer prompt example, from the v1 bundle's runs' own answers (tests/fixtures/v1_bundles):
the local 0.5B model answered 15 of GSW's 105 LoCoMo questions with version 1's in-instruction
example ("The week before 9 June 2023."). Version 2 moves the example into an invented exchange of its own, and the
health check counts answers that copy the example of the prompt their run was sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import v1_bundle

from memeval.datasets.types import Question
from memeval.evaluation.conversations.locomo import LoCoMoProtocol
from memeval.evaluation.conversations.locomo_answer import EXAMPLES
from memeval.evaluation.health.answer import answer_checks, copied_example
from memeval.evaluation.health.run import prompt_examples
from memeval.evaluation.runs.health_file import load_thresholds
from memeval.evaluation.runs.upgrade import read_config

BUNDLE = v1_bundle("locomo-local")
GSW_RUN = next((BUNDLE / "runs" / "locomo").glob("gsw-*"))
V1_EXAMPLE = "the week before 9 June 2023"


def _predictions(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines() if x.strip()]


def _copies(run: Path) -> list[dict]:
    return [p for p in _predictions(run) if copied_example(p["answer"], p["context_text"], (V1_EXAMPLE,))]


def test_the_v1_gsw_run_copied_version_1s_example_and_the_check_finds_it() -> None:
    copies = _copies(GSW_RUN)
    assert len(copies) == 15  # every one "The week before 9 June 2023.", whatever the question asked
    assert {p["answer"] for p in copies} == {"The week before 9 June 2023."}
    assert not any(V1_EXAMPLE.lower() in str(p["gold"]).lower() for p in copies)  # never the gold
    assert prompt_examples(GSW_RUN) == (V1_EXAMPLE,)  # the run was sent version 1 (upgraded config)
    th = load_thresholds()["answer"]
    (check,) = [c for c in answer_checks(_predictions(GSW_RUN), prompt_examples(GSW_RUN), th)
                if c.name == "prompt_example_answers"]
    assert check.status == "fail" and "15 of 105" in check.message


def test_a_copy_inside_a_longer_answer_counts_and_a_context_that_says_it_does_not() -> None:
    (copy,) = _copies(GSW_RUN)[:1]
    longer = f"I think it was {copy['answer'].rstrip('.').lower()}, after the trip."
    assert copied_example(longer, copy["context_text"], (V1_EXAMPLE,)) == V1_EXAMPLE
    assert copied_example(copy["answer"], "Jon: it was the week before 9 June 2023.", (V1_EXAMPLE,)) is None
    assert copied_example("last week", "", ("last week",)) == "last week"  # a wordy example: only equal
    assert copied_example("I saw it last week", "", ("last week",)) is None


@pytest.mark.parametrize("run", sorted((BUNDLE / "runs" / "locomo").iterdir()), ids=lambda p: p.name)
def test_copies_in_every_v1_locomo_run_are_those_of_version_1(run: Path) -> None:
    """The check counts what each run copied (GSW 15, HippoRAG 2 one, Embedding RAG one; the rest none)."""
    want = {"gsw": 15, "hipporag2": 1, "embedding_rag": 1}.get(run.name.rsplit("-", 1)[0], 0)
    assert read_config(run).dataset.protocol.answer_prompt_version == 1
    assert len(_copies(run)) == want


def test_version_2_keeps_the_example_out_of_the_instructions() -> None:
    q = Question("q", "conv-1", "When did Ana move?", ("May 2023",))
    v1 = LoCoMoProtocol(answer_prompt_version=1).answer_messages(q, "CONTEXT")
    v2 = LoCoMoProtocol().answer_messages(q, "CONTEXT")
    assert [m["role"] for m in v1] == ["system", "user"] and V1_EXAMPLE in v1[0]["content"]
    assert [m["role"] for m in v2] == ["system", "user", "assistant", "user"]
    instructions = v2[0]["content"].lower()
    assert V1_EXAMPLE.lower() not in instructions and "for example" not in instructions
    (example,) = EXAMPLES[2]
    assert example not in v2[0]["content"] and v2[2]["content"] == example  # the example: its own turn
    assert "CONTEXT" not in v2[1]["content"] and "CONTEXT" in v2[3]["content"]  # an invented conversation
    assert v2[3]["content"] == v1[1]["content"]  # the real question reads as before
    assert LoCoMoProtocol().describe()["answer_prompt"] == "locomo-answer-v2"
    assert LoCoMoProtocol(answer_prompt_version=1).describe()["answer_prompt"] == "locomo-answer-v1"
    # a copy of version 2's example is as detectable as version 1's
    assert copied_example(f"{example}.", "### Session 4 (1:56 pm on 8 May, 2023)\n...", EXAMPLES[2]) == example
