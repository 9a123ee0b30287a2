"""Questions that repeat another's text and evidence are a dataset fact, and tables give the headline
with and without them (issue [scoring]: LoCoMo conv-30 q61/q95, conv-48's 11 pairs)."""

from __future__ import annotations

from pathlib import Path

from memeval.datasets.facts import dataset_facts, repeated_questions
from memeval.datasets.locomo import LoCoMoLoader
from memeval.datasets.types import Question
from memeval.evaluation.runs.blocks import repeats_block, repeats_line


def _q(qid: str, text: str, evidence: list[str], corpus: str = "c1") -> Question:
    return Question(qid, corpus, text, ("x",), attrs={"evidence": evidence})


def test_same_text_and_evidence_is_a_repeat_other_evidence_or_corpus_is_not() -> None:
    qs = [_q("a", "What did she buy?", ["D1:2"]), _q("b", "what did  she buy?", ["D1:2"]),
          _q("c", "What did she buy?", ["D3:1"]), _q("d", "What did she buy?", ["D1:2"], corpus="c2")]
    assert repeated_questions(qs) == {"b": "a"}


def test_locomo_repeats(data_dir: Path) -> None:
    ds = LoCoMoLoader(str(data_dir)).load()
    reps = repeated_questions(ds.questions)
    assert reps["conv-30-q95"] == "conv-30-q61"  # category 4 and its category-5 twin
    assert sum(1 for q in reps if q.startswith("conv-48-")) == 11
    facts = dataset_facts(ds, None, ["conv-30-q61", "conv-30-q95", "conv-26-q0"])
    assert facts["repeats"] == {"conv-30-q95": "conv-30-q61"}  # restricted to the run's questions


def test_block_gives_n_with_and_without_repeats() -> None:
    scores = {"a": 1.0, "b": 0.0, "c": 1.0}
    block = repeats_block(scores, {"b": "a"}, "j")
    assert block["all"] == {"n": 3, "j": 2 / 3}
    assert block["without_repeats"] == {"n": 2, "j": 1.0}
    line = repeats_line(block, "J")
    assert "b repeats a" in line and "on the 2 left" in line
