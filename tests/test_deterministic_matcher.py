"""The deterministic EpBench matcher on hand-made answers, with a small hand-made universe."""

from __future__ import annotations

from pathlib import Path

import pytest

from memeval.evaluation.epbench.matcher import match_answer
from memeval.evaluation.epbench.scoring import score_question
from memeval.evaluation.epbench.universe import Chapter, Universe, load_universe

U = Universe(
    dates=frozenset({"May 11, 2026", "October 13, 2024", "September 22, 2026", "March 23, 2024"}),
    locations=frozenset({"Port Jefferson", "High Line", "Washington Square Park", "Queensboro Bridge",
                         "Coney Island", "Brooklyn Bridge"}),
    people=frozenset({"Henry Reed", "Benjamin Green", "Genevieve Burgin", "Owen Thomas",
                      "Scarlett Thomas", "Brooklyn Sanders"}),
    event_types=frozenset({"Tech Hackathon", "Karaoke Night", "Film Festival", "Ice Sculpture Exhibition",
                           "Fashion Show", "Marathon Race"}),
    chapters={"14": Chapter("April 09, 2026", "Snug Harbor Cultural Center", "Benjamin Green", "Tech Hackathon",
                            ("Genevieve Burgin",), "Formed developer teams")},
    source="test",
)
Q_TIMES = "Reflect on all events involving Henry Reed. Provide a list of all dates when these events occurred."
Q_SPACES = "Consider all events that Henry Reed has been involved in. List all the locations."
Q_OTHER = ("Recall what happened involving Benjamin Green and Tech Hackathon at Snug Harbor Cultural Center "
           "on April 09, 2026 and list only who else was involved (if anyone).")
HENRY_DATES = ["May 11, 2026", "October 13, 2024", "September 22, 2026"]


def f1(r, policy: str = "lenient") -> float:
    return score_question(len(r.matching_score), r.matching_score, len(r.identified_items), policy).f1


def test_dates_in_any_format_are_found() -> None:
    r = match_answer(Q_TIMES, "Times", HENRY_DATES,
                     "His events were on 11 May 2026, 10/13/2024 and September 22nd, 2026.", U)
    assert r.matching_score == [1, 1, 1] and len(r.identified_items) == 3 and f1(r) == 1.0


def test_refusals_claim_nothing() -> None:
    r = match_answer(Q_TIMES, "Times", HENRY_DATES, "I cannot find any dates for Henry Reed.", U)
    assert r.matching_score == [0, 0, 0] and r.identified_items == [] and r.refusal and f1(r) == 0.0
    zero = match_answer(Q_TIMES, "Times", [], "The material does not mention Henry Reed.", U)
    assert zero.identified_items == [] and f1(zero) == 1.0


def test_hallucinated_items_on_a_zero_cue_question_score_zero() -> None:
    r = match_answer(Q_SPACES, "Spaces", [], "Coney Island and the Brooklyn Bridge.", U)
    assert sorted(r.identified_items) == ["Brooklyn Bridge", "Coney Island"] and f1(r) == 0.0


def test_over_long_lists_count_every_claim() -> None:
    answer = "Port Jefferson, High Line, Coney Island and Brooklyn Bridge."
    r = match_answer(Q_SPACES, "Spaces", ["Port Jefferson"], answer, U)
    assert r.matching_score == [1] and len(r.identified_items) == 4
    assert f1(r, "lenient") == 1.0 and f1(r, "harsh") == pytest.approx(0.4)


def test_the_cue_is_no_claim_and_invented_people_are() -> None:
    r = match_answer(Q_OTHER, "Other entities", ["Genevieve Burgin"],
                     "Besides Benjamin Green, Genevieve Burgin and Clara Voss were involved.", U)
    assert r.matching_score == [1] and sorted(r.identified_items) == ["Clara Voss", "Genevieve Burgin"]


def test_partial_mentions_get_half_credit() -> None:
    r = match_answer(Q_TIMES, "Times", HENRY_DATES, "In May 2026 and on October 13, 2024.", U)
    assert r.matching_score == [0.5, 1, 0]
    q = "Consider the location Woolworth Building. List all protagonists."
    r = match_answer(q, "Entities", ["Scarlett Thomas"], "A Ms. Thomas.", U)
    assert r.matching_score == [0.5]
    r = match_answer(q, "Entities", ["Scarlett Thomas"], "Owen Thomas.", U)
    assert r.matching_score == [0] and r.identified_items == ["Owen Thomas"]


def test_event_types_by_name_or_by_a_word_only_they_use() -> None:
    q = "Think about Zoe Brown's experiences. Describe all the key events."
    r = match_answer(q, "Event contents", ["Karaoke Night", "Tech Hackathon"],
                     "She sang karaoke with friends and later joined a hackathon.", U)
    assert r.matching_score == [1, 1]
    paraphrase = match_answer(q, "Event contents", ["Tech Hackathon"], "She wrote code all weekend in a team.", U)
    assert paraphrase.matching_score == [0]  # paraphrases are the judge's business


def test_full_event_details_need_something_beyond_the_cue() -> None:
    q = "Provide a comprehensive account of what happened involving Benjamin Green and Tech Hackathon."
    good = match_answer(q, "Full event details", ["Full chapter 14"],
                        "He formed developer teams and worked closely with Genevieve Burgin.", U)
    assert good.matching_score == [1] and len(good.identified_items) == 1
    refusal = match_answer(q, "Full event details", ["Full chapter 14"], "I cannot find this event.", U)
    assert refusal.matching_score == [0] and refusal.identified_items == []


def test_universe_from_the_data(data_dir: Path) -> None:
    u = load_universe(str(data_dir), 20)
    assert "Genevieve Burgin" in u.people  # from post_entities
    assert {"September 13, 2025", "Jackson Gray", "Coney Island", "Knitting Circle"} - (
        u.dates | u.people | u.locations | u.event_types) == {"Knitting Circle"} or "Knitting Circle" in u.event_types
    assert u.chapters["14"].detail == "Formed developer teams"
