"""SEEM passages and frame replies (issue 26): conversation sessions cut into turn windows
(`passage_turns`), chapters left whole; a frame reply without events or copying its
passage's opening asked again once (`frame_retry`), kept or repaired, and counted up to the
index summary and the health checks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import v1_run
from scripted_server import ScriptedServer

from memeval.datasets.types import Corpus, Unit
from memeval.evaluation.health.index import index_checks
from memeval.evaluation.runs.health_file import load_thresholds
from memeval.methods.seem.frames import copies_opening, extract_passage, retry_counts
from memeval.methods.seem.passages import Passage, balanced, speaker_turns, split_passages
from memeval.methods.seem.prompts import EXAMPLE_FRAME
from memeval.model_access.cache import ResponseCache
from memeval.model_access.chat import ChatModel

SESSION = "\n\n".join(f"{'Lena Voss' if i % 2 else 'Piet'}: turn {i} about the regatta." for i in range(1, 12))
CHAPTER = "The fog lifted over the quay.\n\nShe counted the boats: eleven.\n\nNobody came."


def _corpus() -> Corpus:
    return Corpus("c", (Unit("1", SESSION, 0, timestamp="2031/04/10"), Unit("2", CHAPTER, 1),
                        Unit("3", "Piet: short one\n\nLena Voss: yes", 2, timestamp="2031/05/01")))


def test_a_session_becomes_windows_of_at_most_n_turns_of_near_equal_size() -> None:
    assert balanced(11, 4) == [(0, 4), (4, 8), (8, 11)] and balanced(9, 4) == [(0, 3), (3, 6), (6, 9)]
    ps = split_passages(_corpus(), passage_turns=4)
    assert [(p.id, p.unit_id, p.label) for p in ps] == [
        ("1#w1", "1", "turns 1-4"), ("1#w2", "1", "turns 5-8"), ("1#w3", "1", "turns 9-11"),
        ("2", "2", ""), ("3", "3", "")]  # the chapter and the short session stay whole
    assert ps[1].text.startswith("Lena Voss: turn 5") and ps[1].date == "2031/04/10"
    assert "\n\n".join(p.text for p in ps[:3]) == SESSION  # nothing lost, nothing repeated
    assert [p.id for p in split_passages(_corpus())] == ["1", "2", "3"]  # the default: one per unit


def test_a_turn_keeps_its_continuation_lines_and_prose_is_not_a_conversation() -> None:
    chat = "user: plan my trip\nassistant: Day 1: the harbour.\nDay 2: the hills.\nuser: thanks"
    assert speaker_turns(chat) == ["user: plan my trip", "assistant: Day 1: the harbour.\nDay 2: the hills.",
                                   "user: thanks"]
    assert speaker_turns(CHAPTER) is None and speaker_turns("Piet: alone") is None
    with pytest.raises(ValueError, match="set one of them"):
        split_passages(_corpus(), window_turns=3, passage_turns=3)


PASSAGE = Passage("7", "7", 0, "2031/04/10", "Lena Voss repainted the boathouse on Saturday before the regatta "
                                              "began.\n\nPiet Aalders cheered from the jetty.")
GOOD = {"summary": "Lena Voss got the boathouse ready for the regatta.",
        "events": [{"participants": ["Lena Voss"], "action": "repainted the boathouse", "time": "2031-04-08",
                    "time_raw": "on Saturday", "location": "the boathouse", "reason": "the regatta", "method": ""}]}
# what the 0.5B model did on 4 of 19 EpBench chapters: the passage's opening as summary, the
# worked example's events (dropped by the guard)
COPIED = {"summary": "Lena Voss repainted the boathouse on Saturday before the regatta began.",
          "events": EXAMPLE_FRAME["events"]}


def _extract(replies: list[dict[str, Any] | str], retry: bool = True) -> tuple[dict[str, Any], list[dict]]:
    """extract_passage against a server answering frame calls with `replies` in order."""
    queue = list(replies)
    with ScriptedServer() as server:
        server.add_rule(r"\[SEEM:frame\]", lambda m, r: (lambda x: x if isinstance(x, str) else json.dumps(x))(
            queue.pop(0)))
        llm = ChatModel("scripted", base_url=server.base_url, api_key_env=None, cache=ResponseCache(None),
                        json_repair_attempts=0)
        rec = asyncio.run(extract_passage(llm, PASSAGE, graph=False, frame_max_tokens=300, facts_max_tokens=100,
                                          retry=retry))
        return rec, [r["body"] for r in server.requests]


def test_a_copied_summary_without_events_is_asked_again_and_the_better_reply_kept() -> None:
    assert copies_opening(COPIED["summary"], PASSAGE.text) and not copies_opening(GOOD["summary"], PASSAGE.text)
    rec, bodies = _extract([COPIED, GOOD])
    assert rec["frame"]["summary"] == GOOD["summary"] and len(rec["frame"]["events"]) == 1
    assert rec["retry"]["problems"] == ["no_events", "summary_copies_opening"]
    assert rec["retry"]["chosen"] == "retry" and rec["retry"]["left"] == []
    retry = bodies[1]["messages"]
    assert retry[:-2] == bodies[0]["messages"] and retry[-2]["role"] == "assistant"
    assert "lists no event" in retry[-1]["content"] and "copies the opening" in retry[-1]["content"]
    assert retry_counts([rec])["fixed"] == 1 and retry_counts([rec])["asked_no_events"] == 1


def test_a_retry_that_does_not_help_keeps_the_first_reply_and_clears_a_copied_summary_beside_events() -> None:
    copied_with_event = {**GOOD, "summary": COPIED["summary"]}
    rec, bodies = _extract([copied_with_event, copied_with_event])
    assert len(bodies) == 2 and rec["retry"]["chosen"] == "first"
    assert rec["frame"]["summary"] == "" and rec["frame"]["events"] and rec["retry"]["summary_cleared"]
    assert rec["retry"]["left"] == [] and retry_counts([rec])["fixed"] == 1  # repaired, not left
    rec, _ = _extract([COPIED, "{not json"])  # the retry call fails: counted, the first reply stays
    assert rec["retry"]["status"] == "failed" and rec["frame"]["summary"] == COPIED["summary"]
    counts = retry_counts([rec])
    assert counts["failed"] == 1 and counts["left_no_events"] == 1 and counts["summary_cleared"] == 0


def test_a_good_reply_makes_no_second_call_and_the_saved_setting_never_retries() -> None:
    rec, bodies = _extract([GOOD])
    assert len(bodies) == 1 and "retry" not in rec
    rec, bodies = _extract([COPIED], retry=False)
    assert len(bodies) == 1 and "retry" not in rec and rec["frame"]["summary"] == COPIED["summary"]


def test_retry_and_veto_counts_reach_the_index_health_checks(tmp_path: Path) -> None:
    from memeval.methods.seem.method import SEEM

    th = load_thresholds()
    event = {"participants": ["Lena Voss"], "action": "repainted the boathouse"}
    frames = [{"id": f"F{i}", "summary": "s", "events": [event] if i != 3 else [], "provenance": [str(i)]}
              for i in range(1, 5)]
    decisions = [{"new": "F4", "existing": "F1", "merged": False, "level": "weak", "reason": "two regattas",
                  "check": {"same_event": "no"}, "refused": "not_same_event"}]
    vetoed = [{"new": "F2", "existing": "F1", "veto": "dates"}, {"new": "F3", "existing": "F2", "veto": "dates"}]
    (tmp_path / "memory.json").write_text(json.dumps({"frames": frames, "decisions": decisions, "vetoed": vetoed}))
    recs = [{"retry": {"problems": ["no_events"], "left": ["no_events"], "chosen": "first", "status": "ok"}},
            {"retry": {"problems": ["summary_copies_opening"], "left": [], "chosen": "retry", "status": "ok"}}, {}, {}]
    (tmp_path / "summary.json").write_text(json.dumps({"frame_retry": retry_counts(recs)}))
    c = SEEM.index_counters(tmp_path)
    assert c is not None and c.extra["fusion"]["vetoed"] == {"dates": 2}
    assert c.extra["fusion"]["refused"] == {"not_same_event": 1} and c.extra["frame_retry"]["asked"] == 2
    checks = {x.name: x for x in index_checks({"extracts": True, "corpora": {"c": c.to_dict()}}, th["index"])}
    assert "2 pairs vetoed before the judge (dates 2)" in checks["fusion_merge_rate"].message
    assert "not_same_event 1" in checks["fusion_merge_rate"].message
    retry = checks["frame_retry"]
    assert retry.value == 0.25 and retry.status == "warn"  # 1 of 4 passages still without events
    assert "2 of 4 frame replies asked again" in retry.message and "no events 1" in retry.message


def test_the_passage_table_reads_a_bundled_run() -> None:
    """`memeval audit seem-passages` (methods/seem/audits/passages.py) on the v1 LoCoMo bundle's run (tests/fixtures/v1_bundles): 19 whole sessions fused into 7
    frames (0.37 per session), 12 of 12 judged pairs merged, the version-2 settings."""
    from memeval.methods.seem.audits import passages as table

    run = v1_run("locomo-local", "seem")
    assert run.name == "seem-cbefab33e1"
    row = dict(zip(table.COLUMNS, table.row(run), strict=True))
    assert (row["passage_turns"], row["prompt / veto / retry"], row["passages"]) == ("-", "2 / None / False", "19")
    assert (row["frames/session"], row["judged"], row["merged"], row["vetoed"]) == ("0.368", "12", "12", "0")
    assert row["J"] == "0.160" and row["index chat calls"] == "62 (index record)"


@pytest.mark.parametrize(("judged", "merged", "status"), [(67, 0, "warn"), (12, 1, "ok"), (4, 0, "ok")])
def test_a_fusion_that_merges_nothing_it_judged_is_flagged(tmp_path: Path, judged: int, merged: int,
                                                           status: str) -> None:
    """conv-30 at 0.5B with 4-turn windows: 0 of 67 judged pairs merged, the run was SEEM without fusion."""
    from memeval.methods.seem.method import SEEM

    event = {"participants": ["Lena Voss"], "action": "repainted the boathouse"}
    frames = [{"id": f"F{i}", "summary": "s", "events": [event], "provenance": [str(i)]} for i in range(1, 5)]
    decisions = [{"new": "F2", "existing": "F1", "merged": i < merged, "level": "strong" if i < merged else "weak",
                  "reason": "r", "check": {"same_event": "yes" if i < merged else "no"}}
                 | ({} if i < merged else {"refused": "not_same_event"}) for i in range(judged)]
    (tmp_path / "memory.json").write_text(json.dumps({"frames": frames, "decisions": decisions}))
    c = SEEM.index_counters(tmp_path)
    assert c is not None and (c.extra["fusion"]["judged"], c.extra["fusion"]["merged"]) == (judged, merged)
    checks = {x.name: x for x in index_checks({"extracts": True, "corpora": {"c": c.to_dict()}},
                                              load_thresholds()["index"])}
    few = checks["fusion_merges_few"]
    assert few.status == status
    assert ("no-fusion ablation" in few.message) == (status == "warn")
    assert ("too few to judge" in few.message) == (judged < 10)
