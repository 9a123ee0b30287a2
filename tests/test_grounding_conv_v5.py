"""Conversation grounding version 5 (issue 57): words as people write them, from the false rejects
that hand labels of published systems' answers found (evaluation/judge_meta/locomo_published_labels.jsonl).
Invented cases of the same shapes; each passes under 5 and fails under 4, and the known-wrong
answers of the LoCoMo audit are accepted no more often than under 4."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from memeval.evaluation.conversations.grounding import GROUNDING_VERSIONS, key_content
from memeval.evaluation.conversations.locomo import LoCoMoProtocol, grounding, speakers_of
from memeval.evaluation.conversations.longmemeval import LongMemEvalProtocol
from memeval.evaluation.conversations.periods import agree, periods

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


def _ok(answer: str, gold: str, question: str, version: int) -> bool:
    return key_content(answer, gold, question, rules=version).supported


@pytest.mark.parametrize(("answer", "gold", "question"), [
    ("Stress from her job.", "job-related", "What kind of stress was Priya coping with in May?"),
    ("They moved to the United Kingdom.", "UK", "Where did they move?"),
    ("Knitting, baking bread, watching films.", "knitting, bakingbread, watchingfilms", "Her hobbies?"),
])
def test_written_forms_are_read_under_5_only(answer: str, gold: str, question: str) -> None:
    assert _ok(answer, gold, question, 5)
    assert not _ok(answer, gold, question, 4)


def test_a_hyphenated_gold_needs_its_first_part_on_its_own() -> None:
    q = "What kind of group did Ravi join?"
    assert not _ok("A group focused on sharing recipes.", "craft-focused group", q, 5)  # "focused" is not "craft"
    assert not _ok("He is lower-middle-class.", "middle-class", "His status?", 5)  # inside another hyphenated word


def test_an_acronym_needs_every_initial_from_capitalised_words() -> None:
    assert _ok("She studied at the University of Chicago.", "UC", "Where did she study?", 5)
    assert not _ok("She studied in a united college.", "UC", "Where did she study?", 5)  # not capitalised


def test_day_ranges_and_a_few_days() -> None:
    gold = periods("A few days before 24 May, 2023.", 5)[0]
    assert agree(gold, periods("around May 21-23, 2023", 5)[0])
    assert agree(gold, periods("21 to 23 May 2023", 5)[0])
    assert not agree(gold, periods("May 10, 2023", 5)[0])
    assert not agree(gold, periods("May 26, 2023", 5)[0])  # after it, not before
    assert not periods("around May 21-23, 2023", 2)[0]  # version 2 read no range


def test_version_5_is_current_and_shipped() -> None:
    assert GROUNDING_VERSIONS[5] == "conv-grounding-v5"
    assert LoCoMoProtocol.current_grounding == LongMemEvalProtocol.current_grounding == 5
    assert LoCoMoProtocol().grounding_version == LongMemEvalProtocol().grounding_version == 5
    for name in ("locomo", "longmemeval_oracle", "longmemeval_s"):
        conf = yaml.safe_load((ROOT / "conf" / "dataset" / f"{name}.yaml").read_text())
        assert conf["protocol"]["grounding_version"] == 5


def test_known_wrong_answers_are_accepted_no_more_often_than_under_4() -> None:
    path = DATA / "locomo" / "audit" / "known_wrong_answers.jsonl"
    if not path.exists():
        pytest.skip("LoCoMo audit files not set up (python scripts/fetch_data.py)")
    from memeval.datasets.locomo import LoCoMoLoader

    ds = LoCoMoLoader(str(DATA)).load()
    qs = {q.id: q for q in ds.questions}
    moved = []
    for line in path.read_text().splitlines():
        r = json.loads(line)
        q = qs[f"{r['sample_id']}-q{r['qa_index']}"]
        sp = speakers_of(ds.corpora[q.corpus_id])
        v4, v5 = (grounding(q.text, q.gold[0], q.attrs["category"], r["answer"], sp, v)["grounded"] for v in (4, 5))
        if v5 and not v4:
            moved.append(q.id)
    assert moved == []
