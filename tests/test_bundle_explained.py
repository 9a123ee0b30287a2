"""A bundle's notes must give a reason for every failed health check: which passages count."""

from __future__ import annotations

import json
from pathlib import Path

from memeval.evaluation.bundle import explained, facts


def _run(root: Path, method: str, failed: list[str]) -> Path:
    run = root / f"{method}-0123456789"
    run.mkdir(parents=True)
    (run / "meta.json").write_text(json.dumps({"method": method}))
    checks = [{"name": n, "scope": "index", "status": "fail", "value": 0.5, "threshold": {"fail": 0.3},
               "message": f"{n} failed"} for n in failed]
    checks.append({"name": "looping_answers", "scope": "answer", "status": "warn", "value": 0.14,
                   "threshold": {"warn": 0.1}, "message": "loops"})
    (run / "health.json").write_text(json.dumps({"format": 1, "checks": checks}))
    return run


def test_a_reason_names_the_method_and_the_check_in_one_passage(tmp_path: Path) -> None:
    runs = [_run(tmp_path, "gsw", ["kind_drops"]), _run(tmp_path, "seem", ["frame_retry", "units_empty"])]
    assert explained.unexplained("# Notes\n", runs) == ["gsw kind_drops", "seem frame_retry", "seem units_empty"]
    notes = ("# Notes\n\n- gsw `kind_drops` fails: the dropped times are not times.\n"
             "- seem: units_empty, one chapter without events.\n"
             "- frame_retry is a retry counter.\n")  # names the check, not the method: no reason
    assert explained.unexplained(notes, runs) == ["seem frame_retry"]
    # a wrapped paragraph counts as one passage; "seems" is not the method seem
    assert explained.unexplained(notes + "\nThe seem run's\nframe_retry fail stands.\n", runs) == []
    assert explained.unexplained(notes + "\nIt seems frame_retry is fine.\n", runs) == ["seem frame_retry"]
    # the generated block (the export's own facts) is no reason
    generated = facts.BEGIN + "\nseem frame_retry fail\n" + facts.END
    assert explained.unexplained(notes + generated, runs) == ["seem frame_retry"]


def test_the_health_table_has_a_column_per_run(tmp_path: Path) -> None:
    runs = [_run(tmp_path / "a", "gsw", ["kind_drops"]), _run(tmp_path / "b", "gsw", [])]
    lines = explained.health_lines(runs, ["gsw kind_drops"])
    text = "\n".join(lines)
    assert "| scope | check | threshold | gsw-0123456789 | gsw-0123456789 |" in text  # two gsw runs: folder names
    assert "| index | kind_drops | fail 0.300 | fail 0.500 | - |" in text
    assert "| answer | looping_answers | warn 0.100 | warn 0.140 | warn 0.140 |" in text
    assert lines[-1].startswith("- **Failed checks the notes give no reason for**") and "gsw kind_drops" in lines[-1]
