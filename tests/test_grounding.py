"""The grounding check on hand-made answers: only what the answer text states keeps its credit."""

from __future__ import annotations

import pytest

from memeval.evaluation.answer_text import find_dates
from memeval.evaluation.epbench.grounding import (
    assertive_text,
    gold_support,
    ground,
    item_supported,
    phrase_in,
)
from memeval.evaluation.epbench.scoring import score_question

HENRY_DATES = ["May 11, 2026", "October 13, 2024", "September 22, 2026"]


def test_refusal_with_copied_gold_items_is_not_credited() -> None:
    answer = "I'm sorry, but I cannot find any dates for Henry Reed's events in the material."
    # the failure seen with a small judge: gold copied into identified_items and fully credited
    g = ground(answer, HENRY_DATES, [1, 1, 1], list(HENRY_DATES), "date")
    assert g.matching_score == [0, 0, 0]
    assert g.identified_items == [] and g.unsupported_items == HENRY_DATES
    assert g.credited_absent_gold == HENRY_DATES
    assert score_question(3, g.matching_score, g.n_pred).f1 == 0.0
    assert score_question(3, [1, 1, 1], 3).f1 == 1.0  # what the raw credit would have said


def test_refusal_repeating_the_cue_asserts_nothing() -> None:
    answer = "The material mentions Henry Reed, but no dates are given for his events."
    g = ground(answer, ["Port Jefferson"], [1], ["Henry Reed", "Port Jefferson"], "location")
    assert g.matching_score == [0] and g.unsupported_items == ["Port Jefferson"]


@pytest.mark.parametrize("written", ["13 September 2025", "September 13th, 2025", "Sept. 13, 2025",
                                     "2025-09-13", "9/13/2025", "13th of September 2025"])
def test_other_date_formats_ground_the_gold_date(written: str) -> None:
    answer = f"It took place on {written}."
    assert item_supported("September 13, 2025", answer)
    g = ground(answer, ["September 13, 2025"], [1], [written], "date")
    assert g.matching_score == [1] and g.identified_items == [written] and not g.credited_absent_gold


def test_a_different_date_does_not_ground() -> None:
    answer = "It took place on September 13, 2026."
    g = ground(answer, ["September 13, 2025"], [1], ["September 13, 2025"], "date")
    assert g.matching_score == [0] and g.credited_absent_gold == ["September 13, 2025"]


def test_month_and_year_alone_keep_at_most_half_credit() -> None:
    g = ground("Sometime in September 2025.", ["September 13, 2025"], [1], ["September 2025"], "date")
    assert g.matching_score == [0.5]


def test_a_paraphrased_event_type_is_left_to_the_judge() -> None:
    answer = ("He spent a day writing code with other developers in a team programming sprint, and later "
              "helped carve frozen statues for a public display.")
    claimed = ["team programming sprint", "carve frozen statues for a public display"]
    gold = ["Tech Hackathon", "Ice Sculpture Exhibition"]
    g = ground(answer, gold, [1, 1], claimed, "event_type", known=gold + ["Fashion Show"])
    assert g.matching_score == [1, 1]
    assert g.left_to_judge == gold and not g.unsupported_items and not g.credited_absent_gold


def test_a_copied_event_type_beside_a_named_one_is_not_credited() -> None:
    answer = "She took part in a Fashion Show."
    gold = ["Fashion Show", "Parkour Workshop"]
    g = ground(answer, gold, [1, 1], ["Fashion Show", "Parkour Workshop"], "event_type", known=gold)
    assert g.matching_score == [1, 0] and g.unsupported_items == ["Parkour Workshop"]
    assert g.credited_absent_gold == ["Parkour Workshop"]


def test_light_fuzziness_for_names_and_places() -> None:
    assert phrase_in("Woolworth Building", "They met at the Woolworth Bulding downtown.")
    assert phrase_in("St. Patrick's Cathedral", "Saint Patrick's Cathedral")
    assert not phrase_in("Henry Reed", "Henry Ross was there.")
    assert not phrase_in("High Line", "the Highland Park")
    places = ["Snug Harbor Cultural Center", "Brooklyn Bridge", "Brooklyn Museum", "Queensboro Bridge"]
    assert gold_support("Snug Harbor Cultural Center", "At Snug Harbor.", "location", places) == "full"
    assert gold_support("Brooklyn Bridge", "At the Brooklyn Museum.", "location", places) is None


def test_partial_names_never_come_from_another_known_name() -> None:
    known = ["Owen Thomas", "Scarlett Thomas"]
    assert gold_support("Scarlett Thomas", "Owen Thomas.", "person", known) is None
    assert gold_support("Scarlett Thomas", "A Ms. Thomas.", "person", known) == "partial"
    g = ground("Owen Thomas.", ["Scarlett Thomas"], [1], ["Owen Thomas"], "person", known)
    assert g.matching_score == [0]


def test_refusal_sentences_drop_but_exceptions_stay() -> None:
    text = assertive_text("I cannot find any other places. Besides that, only Port Jefferson is named.")
    assert "Port Jefferson" in text and "cannot" not in text
    assert [d.key for d in find_dates("from 2024-05-07 to 31/05/2024")] == ["2024-05-07", "2024-05-31"]


@pytest.mark.parametrize(("text", "keys"), [
    ("On 7 May 2023, May 8, 2023, then 2023-05-09 and 5/10/2023, in May 2023",
     ["2023-05-07", "2023-05-08", "2023-05-09", "2023-05-10", "2023-05"]),
    ("Sept. 13th, 2025 or the 4th of July, 1776", ["2025-09-13", "1776-07-04"]),
    ("05/06/2024, 13.05.2024, 3June? no: 3 June, 2022", ["2024-05-06", "2024-05-13", "2022-06-03"]),
    ("March, 2023 and December 2023", ["2023-03", "2023-12"]),
    # no calendar day, or no date at all: nothing found ...
    ("February 30, 2023, 2023-02-29, 4/31/2023, 13/13/2024, 2024-13-05, Mayday 2023, May 0999", []),
    # ... but a day-first one still names its month, as "32 December 2023" always did
    ("30 February 2023 or 32 December 2023", ["2023-02", "2023-12"]),
])
def test_dates_found_in_running_text(text: str, keys: list[str]) -> None:
    assert [d.key for d in find_dates(text)] == keys


def test_a_paraphrase_keeps_credit_even_when_the_judge_wrote_the_gold_name() -> None:
    known = ["Parkour Workshop", "Cooking Class", "Theater Performance"]
    q = "What was Ezra Edwards doing the last time they were observed in the story's timeline?"
    answer = "He was demonstrating cat leaps and vaulting over obstacles in a free-running class."
    g = ground(answer, ["Parkour Workshop"], [1], ["Parkour Workshop"], "event_type", known, question=q)
    assert g.matching_score == [1] and g.left_to_judge == ["Parkour Workshop"]
    # a different, named event leaves no room for a paraphrase
    wrong = ground("He was at a cooking class.", ["Theater Performance"], [1], ["Theater Performance"],
                   "event_type", known, question=q)
    assert wrong.matching_score == [0] and wrong.credited_absent_gold == ["Theater Performance"]
    # nor does the question's own cue, listed by the judge as a claim
    cue = ground("Mila Gonzalez was at a cooking class.", ["Theater Performance"], [1],
                 ["Mila Gonzalez", "cooking class"], "event_type", known,
                 question="What was Mila Gonzalez doing the last time they were observed?")
    assert cue.matching_score == [0]
