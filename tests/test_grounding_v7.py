"""EpBench grounding version 7 (issue 56): two loopholes of version 6 closed.

- A place named by part of its name passed even when that part sat inside another name: an
  invented "<other place> Cultural Center" was credited as "<gold> Cultural Center" because
  "cultural" is a word no other known place uses. Version 7 wants the short form to be a name of
  its own (grounding._own_name).
- One activity word of an event type in the answer kept the judge's credit for it, even where the
  sentence named another event ("a developer hosting an astronomy quiz" for a hackathon) or was
  about people of another event ("three guests of a networking evening meet at the venue" for a
  film festival). Version 7 reads activity words per sentence (evidence.activity_in_sentences).

Invented names and sentences of the same shape as the bundle's cases; the last test reads the
bundle's own saved judgments (results/epbench20-local) where they are present.
"""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest
import yaml

from memeval.evaluation.epbench.evidence import EPBENCH_GROUNDING_VERSIONS, ground_v2
from memeval.evaluation.epbench.grounding import FULL, gold_support
from memeval.evaluation.epbench.matcher import checks
from memeval.evaluation.epbench.protocol import EpBenchProtocol
from memeval.evaluation.epbench.universe import Chapter, Universe, load_universe

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "results" / "epbench20-local" / "runs" / "epbench20"

GOLD_PLACE = "Gull Cove Cultural Center"
PLACES = [GOLD_PLACE, "Pine Walk", "Lincoln Center", "Stony Village Center", "Natural History Museum of Elm"]


def _place(text: str, whole_name: bool) -> str | None:
    return gold_support(GOLD_PLACE, text, "location", PLACES, whole_name=whole_name)


def test_a_short_form_inside_another_name_no_longer_names_the_place() -> None:
    wrong = "Pine Walk Cultural Center"  # another known place's words + the gold's generic tail
    assert _place(wrong, whole_name=False) == FULL  # version 6's loophole
    assert _place(wrong, whole_name=True) is None
    assert _place("They met at the pine walk cultural center.", whole_name=True) is None  # lower case too
    assert _place("Maple Ridge Cultural Center", whole_name=True) is None  # an invented name is another name


def test_a_real_short_form_still_names_the_place() -> None:
    for text in ("Gull Cove", "She went to Gull Cove that night.", "Visited Gull Cove Center",
                 "the gull cove center", "Gull Cove Cultural Center"):
        assert _place(text, whole_name=True) == FULL, text


EVENTS = ("Code Sprint", "Star Gazing Night", "Mixer Evening")


def _universe() -> Universe:
    chapters = {
        "1": Chapter("May 1, 2025", "Pine Walk", "Ana Reyes", "Code Sprint", ("Bo Lind",), None),
        "2": Chapter("May 2, 2025", "Lincoln Center", "Cy Moss", "Mixer Evening", ("Di Park", "Ed Vance"), None),
        "3": Chapter("May 3, 2025", "Pine Walk", "Fay Lu", "Star Gazing Night", (), None),
    }
    details = {"Code Sprint": ("Debugged the prototype", "Debugged a prototype", "Refactored modules"),
               "Star Gazing Night": ("Spotted comets", "Spotted comets again"),
               "Mixer Evening": ("Traded business cards", "Traded business cards")}
    chapter_words = {"Code Sprint": frozenset({"ana", "sprint"}), "Star Gazing Night": frozenset({"fay"}),
                     "Mixer Evening": frozenset({"card"})}
    return Universe(frozenset({"May 1, 2025", "May 2, 2025", "May 3, 2025"}), frozenset(PLACES),
                    frozenset({"Ana Reyes", "Bo Lind", "Cy Moss", "Di Park", "Ed Vance", "Fay Lu"}),
                    frozenset(EVENTS), chapters, "test", details, chapter_words)


def _credit(answer: str, version: int, gold: tuple[str, ...] = ("Code Sprint",)) -> list[float]:
    return ground_v2(answer, list(gold), [1.0] * len(gold), list(gold), "event_type", _universe(),
                     "What happened at Pine Walk?", version).matching_score


def test_an_activity_word_in_a_sentence_naming_another_event_is_no_evidence() -> None:
    answer = "Ana Reyes, who debugged things all day, hosted a gazing quiz for the crowd."
    assert _credit(answer, 6) == [1.0]  # version 6: "debugged" alone kept the credit
    assert _credit(answer, 7) == [0.0]  # the sentence names the Star Gazing Night by its own word


def test_an_activity_word_of_people_from_another_event_is_no_evidence() -> None:
    answer = "Cy Moss and Di Park debugged their slides before the talks."
    assert _credit(answer, 6) == [1.0]
    assert _credit(answer, 7) == [0.0]  # neither was at a Code Sprint chapter
    assert _credit("Bo Lind debugged the prototype with a friend.", 7) == [1.0]  # Bo Lind was


def test_a_plain_paraphrase_keeps_its_credit_and_both_gold_events_count() -> None:
    assert _credit("She debugged the prototype until dawn.", 7) == [1.0]
    both = "Ana debugged the prototype, and later everyone spotted comets from the roof."
    assert _credit(both, 7, ("Code Sprint", "Star Gazing Night")) == [1.0, 1.0]


def test_version_7_is_current_and_the_shipped_default() -> None:
    assert max(EPBENCH_GROUNDING_VERSIONS) == EpBenchProtocol.current_grounding == 7
    assert EpBenchProtocol().grounding_version == 7
    for name in ("epbench20", "epbench200", "epbench2000"):
        conf = yaml.safe_load((ROOT / "conf" / "dataset" / f"{name}.yaml").read_text())
        assert conf["protocol"]["grounding_version"] == 7


LOOPHOLES = {"vanilla": ("q31-538", "q0-232", "q24-296"), "seem": ("q34-157", "q24-296", "q2-355")}


@pytest.mark.skipif(not BUNDLE.is_dir(), reason="the epbench20-local bundle is not here")
def test_the_bundle_loophole_questions_lose_their_credit_under_7() -> None:
    book = None
    for method, qids in LOOPHOLES.items():
        (run,) = BUNDLE.glob(f"{method}-*")
        cfg = yaml.safe_load((run / "config.yaml").read_text())
        book = cfg["dataset"]["protocol"].get("book")
        data = Path(cfg.get("data_dir") or "")
        data = data if (data / "epbench").exists() else ROOT / "data"
        if not (data / "epbench").exists():
            pytest.skip("EpBench data is not here")
        universe = load_universe(data, book)
        judged = {j["question_id"]: j for j in map(json.loads, (run / "judgments.jsonl").read_text().splitlines())}
        with lzma.open(run / "predictions.jsonl.xz", "rt") as f:
            preds = {p["question_id"]: p for p in map(json.loads, f)}
        for q in qids:
            j, p = judged[q], preds[q]
            args = (p["question"], j["retrieval_type"], j["gold"], j["matching_score"], j["identified_items"],
                    p["answer"], universe)
            before = checks(*args, rules=6)["matching_score_grounded"]
            assert before == j["matching_score_grounded"] and sum(before) > 0, (method, q)  # v6 as saved
            assert sum(checks(*args, rules=7)["matching_score_grounded"]) == 0, (method, q)
