"""GSW's kind checks (methods/gsw/kinds.py) on the v1 EpBench-20 index's real replies
(tests/fixtures/v1_bundles), and their counts reaching the index health check (`kind_drops`)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conftest import v1_bundle  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

from memeval.evaluation.health.index import index_checks  # noqa: E402
from memeval.methods.gsw.counters import gsw_counters  # noqa: E402
from memeval.methods.gsw.kinds import check_kinds, is_time, proper_head  # noqa: E402
from memeval.methods.gsw.operator import outputs_of  # noqa: E402
from memeval.methods.gsw.reconciler import Reconciler, chunk_workspace  # noqa: E402
from memeval.methods.gsw.workspace import ChunkRecord, Workspace  # noqa: E402
from memeval.methods.output_guard import ChunkText  # noqa: E402

# the v1 EpBench bundle's GSW index (tests/fixtures/v1_bundles): the 0.5B model's stored replies
CHAPTERS = v1_bundle("epbench20-local") / "indexes" / "gsw-4b40f1118a" / "epbench20" / "chapters"
THRESHOLDS = OmegaConf.to_container(OmegaConf.load(ROOT / "conf" / "health" / "default.yaml"))


def _chunk(chapter: str, cid: str) -> ChunkRecord:
    ws = json.loads((CHAPTERS / f"{chapter}.json").read_text(encoding="utf-8"))
    return ChunkRecord.model_validate(next(c for c in ws["chunks"] if c["id"] == cid))


def test_times_are_dates_time_words_or_temporal_phrases() -> None:
    for t in ("May 07, 2024", "2:24 PM", "4:04 pm on 20 January, 2023", "2026", "later that day", "this month",
              "night", "since we last spoke", "during the intermission", "May"):
        assert is_time(t), t
    for t in ("rugged terrain", "banners", "Henry Reed", "East River", "sun", "it may rain", "final challenge", "Gina"):
        assert not is_time(t), t


def test_the_real_reply_of_chapter_1_loses_its_sentence_names_and_its_non_times() -> None:
    r = _chunk("1", "1.0")
    op, st = outputs_of(r)
    assert op is not None and st is not None
    out, out_st, counts = check_kinds(op, st, r.text, set(), [])
    names = {e.name for e in out.entities}
    assert "Adrenaline coursed through his veins" in {e.name for e in op.entities} - names
    assert {"rugged terrain", "parkour workshop"} <= names  # a noun phrase stays an entity, whatever its kind
    times = [x.value for x in out_st.links if x.kind == "time"]
    assert "rugged terrain" in [x.value for x in st.links if x.kind == "time"] and "rugged terrain" not in times
    # 9 of the reply's 10 links repeat "urban art of movement" (removed); the non-time keeps its entities together
    assert [(x.kind, x.value, x.entity_ids) for x in out_st.links] == [
        ("space", "urban art of movement", ["e1", "e2", "e4", "e5"]), ("time", None, ["e1", "e2", "e4", "e5"])]
    assert counts["kind_link_repeats_removed"] == 8
    assert counts["kind_times_dropped"] >= 1 and counts["kind_entities_dropped"] >= 1


def test_a_clause_name_is_cut_to_its_proper_name_and_a_date_place_becomes_a_time() -> None:
    r = _chunk("10", "10.8")
    op, st = outputs_of(r)
    out, _, counts = check_kinds(op, st, r.text, set(), [])
    assert "Queensboro Bridge" in {e.name for e in out.entities} and counts["kind_names_repaired"] == 1
    assert proper_head("Adrenaline coursed through his veins", ChunkText(r.text)) is None
    r = _chunk("19", "19.9")
    op, st = outputs_of(r)
    _, out_st, counts = check_kinds(op, st, r.text, set(), [])
    assert ("time", "September 03, 2026") in {(x.kind, x.value) for x in out_st.links}
    assert "September 03, 2026" not in {x.value for x in out_st.links if x.kind == "space"}
    assert counts["kind_places_to_times"] >= 1


def test_a_place_is_not_a_person_the_chapter_knows_unless_it_is_named_as_a_place() -> None:
    from memeval.methods.gsw.schemas import OperatorOutput, SpaceTimeOutput

    op = OperatorOutput.model_validate({"entities": [{"id": "e1", "name": "Ida Wren"}, {"id": "e2", "name": "Olek"}]})
    st = SpaceTimeOutput.model_validate({"links": [{"kind": "space", "value": "Ida Wren", "entity_ids": ["e2"]},
                                                   {"kind": "space", "value": "Wren Hall", "entity_ids": ["e2"]}]})
    text = "Olek met Ida Wren at Wren Hall."
    _, out, counts = check_kinds(op, st, text, {"ida wren", "wren hall"}, [])
    assert [x.value for x in out.links] == [None, "Wren Hall"] and counts["kind_places_dropped"] == 1


def _index(tmp: Path, validate: bool) -> Path:
    """Chapter 1's saved replies reconciled again (no model call) and saved as an index folder."""
    saved = json.loads((CHAPTERS / "1.json").read_text(encoding="utf-8"))
    ws = Workspace(scope="1", chapters=["1"])
    rec = Reconciler(ws, forward_falling=False, validate_kinds=validate)
    for c in saved["chunks"]:
        r = ChunkRecord.model_validate(c)
        op, st = outputs_of(r)
        asyncio.run(rec.add(chunk_workspace(r, op, st, rec.persons if validate else None)))
    folder = tmp / ("checked" if validate else "plain")
    (folder / "chapters").mkdir(parents=True)
    (folder / "chapters" / "1.json").write_text(json.dumps(ws.to_json()), encoding="utf-8")
    return folder


def _health(counters: Any) -> dict[str, Any]:
    checks = index_checks({"extracts": True, "folder": "x", "corpora": {"c": counters.to_dict()}},
                          THRESHOLDS["index"])
    return {c.name: c for c in checks}


def test_kind_drops_reach_the_index_health_check(tmp_path: Path) -> None:
    checked = gsw_counters(_index(tmp_path, True))
    assert checked is not None
    dropped = checked.extra["validation"]["dropped"]
    # chapter 1's replies hold 9 time values; 7 are not times ("rugged terrain", "banners", ...)
    assert dropped["times"] == [7, 9] and dropped["entities"][0] >= 1
    check = _health(checked)["kind_drops"]
    assert (check.value, check.status) == (0.7778, "fail") and "times 7 of 9" in check.message
    plain = gsw_counters(_index(tmp_path, False))  # an index built without the checks: not measured
    assert plain is not None and "validation" not in plain.extra and "kind_drops" not in _health(plain)
    assert checked.names < plain.names and checked.names_not_noun_phrase < plain.names_not_noun_phrase


def test_a_repeated_link_is_checked_and_counted_once() -> None:
    """The 0.5B model's JSON space-time replies repeat a line ("time crickets = e1" seven times):
    the repeats are removed before the checks, and kind_drops counts distinct links, so one bad
    value is one drop of two times, not seven of eight."""
    from memeval.methods.gsw.counters import kind_validation
    from memeval.methods.gsw.schemas import OperatorOutput, SpaceTimeOutput

    op = OperatorOutput.model_validate({"entities": [{"id": "e1", "name": "Olek"}]})
    raw = {"links": [{"kind": "time", "value": "crickets", "entity_ids": ["e1"]}] * 7
           + [{"kind": "time", "value": "May 3, 2024", "entity_ids": ["e1"]}]}
    _, out, counts = check_kinds(op, SpaceTimeOutput.model_validate(raw), "Olek heard crickets on May 3, 2024.",
                                 set(), [])
    assert [(x.kind, x.value) for x in out.links] == [("time", None), ("time", "May 3, 2024")]
    assert counts["kind_link_repeats_removed"] == 6 and counts["kind_times_dropped"] == 1
    chunk = {"operator": op.model_dump(mode="json"), "space_time": raw,
             "guard": {**counts, "kinds_checked": 3}}
    assert kind_validation([chunk])["dropped"]["times"] == [1, 2]
    before = {**chunk, "guard": {"kind_times_dropped": 7, "kinds_checked": 1}}  # checked per line (version 2)
    assert kind_validation([before])["dropped"]["times"] == [7, 8]
