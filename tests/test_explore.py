"""The results explorer built from the shipped bundles' run folders (read-only): every method and
question is in it, labels and gold-unit highlights match the saved artifacts, health.json and
judge_matrix.json are read tolerantly, and two builds are identical byte for byte."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from explore_site import (
    EPBENCH_RUNS,
    LOCOMO_RUNS,
    chunk,
    gold_block_question,
    saved_labels,
    site_data,
)

from memeval.cli import main as cli_main
from memeval.evaluation.explore import ExploreError, build_site
from memeval.evaluation.explore.questions import FLAGS, header_unit
from memeval.evaluation.explore.readers import read_judge_matrix
from memeval.evaluation.explore.site import generated_files
from memeval.evaluation.runs.scored import load_runs


@pytest.fixture(scope="module")
def ep_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("explore") / "site"
    build_site(EPBENCH_RUNS, out)
    return out


def test_every_method_and_question_with_the_saved_labels(ep_site: Path) -> None:
    data = site_data(ep_site)
    (ds,) = data["datasets"]
    methods = [m["method"] for m in ds["methods"]]
    assert sorted(methods) == sorted(json.loads((r / "meta.json").read_text())["method"] for r in EPBENCH_RUNS)
    n_questions = len({json.loads(line)["question_id"] for r in EPBENCH_RUNS
                       for line in (r / "predictions.jsonl").read_text().splitlines()})
    assert len(ds["rows"]) == n_questions
    for i, run in enumerate(EPBENCH_RUNS):
        saved = saved_labels(run)
        shown = {row[0]: data["labels"][row[4][i][1]] for row in ds["rows"] if row[4][i] is not None}
        assert shown == saved, run.name
        counts = Counter(saved.values())
        assert ds["methods"][i]["labels"] == {k: counts.get(k, 0) for k in data["labels"]
                                              if counts.get(k, 0) or k not in ("no label", "wrong_unseen")}
        assert ds["methods"][i]["correct"] == counts["correct"]
    assert set(ds["charts"]) >= {"by_group", "frontier", "tokens_per_correct"}
    assert "usd_per_correct" not in ds["charts"]  # every bundled model is unpriced: no empty chart
    by_group = json.dumps(ds["charts"]["by_group"])
    for g in ("0", "1", "2", "3-5", "overall (unweighted)", "overall (weighted)"):
        assert f'"group": "{g}"' in by_group or f'"group":"{g}"' in by_group
    assert "judge qwen2.5-coder-0.5b-instruct" in by_group and "grounded, grounding v1 credit" in by_group


def test_a_stratified_subset_charts_its_weighted_overall(ep_site: Path) -> None:
    """The 40 questions are a stratified subset of the book's 456: the by-group chart drew their
    plain mean as "overall" and the frontier plotted it, while the papers' headline (and the
    paired table's MDE) is the population-weighted overall. Both are now drawn, each named, and
    the frontier plots the weighted one; the runs table shows it in a column of its own."""
    (ds,) = site_data(ep_site)["datasets"]
    runs = {r.label: r for r in load_runs(EPBENCH_RUNS)}
    rows = [v for layer in ds["charts"]["by_group"]["layer"] for v in layer.get("data", {}).get("values", [])]
    rows = rows or ds["charts"]["by_group"]["data"]["values"]
    for m in ds["methods"]:
        w = runs[m["label"]].weighted_overall
        assert w is not None and m["weighted"]["value"] == pytest.approx(w["f1"])
        assert w["f1"] != pytest.approx(m["headline"]["value"])  # the buckets' shares differ from the subset's
        shown = {r["group"]: r["value"] for r in rows if r["method"] == m["label"]}
        assert shown["overall (weighted)"] == pytest.approx(w["f1"])
        assert shown["overall (unweighted)"] == pytest.approx(m["headline"]["value"])
    frontier = ds["charts"]["frontier"]
    assert "weighted by population share" in json.dumps(frontier)
    points = {r["method"]: r["value"] for r in frontier["data"]["values"]} if "data" in frontier else {
        r["method"]: r["value"] for layer in frontier["layer"] for r in layer.get("data", {}).get("values", [])}
    assert points == {m["label"]: pytest.approx(m["weighted"]["value"]) for m in ds["methods"]}


def test_the_question_page_marks_the_gold_units_blocks(ep_site: Path) -> None:
    data = site_data(ep_site)
    (ds,) = data["datasets"]
    i = next(k for k, r in enumerate(EPBENCH_RUNS) if r.name.startswith("vanilla"))
    qid, unit = gold_block_question(EPBENCH_RUNS[i])
    idx = [r[0] for r in ds["rows"]].index(qid)
    q = chunk(ep_site, "q", f"{ds['prefix']}-{idx // ds['chunk']:04d}")[qid]
    blocks = q["methods"][i]["context"]["blocks"]
    gold = {b[1] for b in blocks if b[2]}
    assert unit in gold and gold <= set(q["gold_units"])
    assert all(b[1] is not None for b in blocks)  # every Vanilla block is headed by its chapter
    starts = data["text_files"]
    f = max(n for n, s in enumerate(starts) if s <= blocks[0][0])
    texts = chunk(ep_site, "t", f"{f:04d}")
    assert texts["texts"][blocks[0][0] - texts["start"]].startswith(f"### Chapter {blocks[0][1]}")
    judge = q["methods"][i]["judge"]
    assert [c["name"] for c in judge["credits"]] == ["raw (LLM judge)", "grounded", "deterministic matcher"]


def test_gsw_links_into_its_bundled_workspaces(ep_site: Path) -> None:
    data = site_data(ep_site)
    (ds,) = data["datasets"]
    i = next(k for k, r in enumerate(EPBENCH_RUNS) if r.name.startswith("gsw"))
    assert ds["methods"][i]["index"]
    q = chunk(ep_site, "q", f"{ds['prefix']}-0000")
    links = [link for v in q.values() if v["methods"][i] for link in v["methods"][i]["index"].get("units", {}).values()]
    assert links and all((ep_site / link).resolve().is_file() for link in links)
    assert all("/chapters/" in link for link in links)


def test_two_builds_are_identical(tmp_path: Path) -> None:
    runs = LOCOMO_RUNS[:2]
    build_site(runs, tmp_path / "a")
    build_site(runs, tmp_path / "b")
    a, b = generated_files(tmp_path / "a"), generated_files(tmp_path / "b")
    assert a == b and "index.html" in a and "vendor/vega-bundle.js" in a
    assert not any(str(tmp_path) in v.decode("utf-8", "replace") for v in a.values())


def test_health_and_judge_matrix_are_shown(tmp_path: Path) -> None:
    runs = []
    for src in LOCOMO_RUNS[:2]:
        shutil.copytree(src, tmp_path / "runs" / src.name)
        runs.append(tmp_path / "runs" / src.name)
    qid = json.loads((runs[0] / "predictions.jsonl").read_text().splitlines()[0])["question_id"]
    (runs[0] / "health.json").write_text(json.dumps({"format": 2, "checks": [
        {"name": "unsourced_names", "scope": "context", "status": "fail", "value": 0.2, "threshold": 0.1,
         "message": "21 of 105 contexts hold a name the corpus never writes", "questions": {qid: "Port Veltham"}},
        {"name": "judge_kappa", "scope": "judge", "status": "warn", "value": 0.1, "threshold": 0.4, "message": "κ 0.10"}]}))
    (runs[1] / "health.json").write_text(json.dumps({"format": 1, "checks": []}))
    labels = [json.loads((r / "meta.json").read_text())["method"] for r in runs]
    (tmp_path / "runs" / "judge_matrix.json").write_text(json.dumps(
        {"criteria": ["strict", "generous"], "scores": {"strict": {labels[0]: 0.1, labels[1]: 0.2},
                                                      "generous": {labels[0]: 0.9, labels[1]: 0.5}},
         "kendall_tau": {"strict/generous": -1.0}}))
    out = tmp_path / "site"
    build_site(runs, out)
    (ds,) = site_data(out)["datasets"]
    h0, h1 = ds["methods"][0]["health"], ds["methods"][1]["health"]
    assert h0["status"] == "fail" and h1["status"] == "ok"
    assert h0["mark"] == "fail: 21 of 105 contexts hold a name the corpus never writes"
    row = next(r for r in ds["rows"] if r[0] == qid)
    assert row[4][0][2] & FLAGS["health check"] and not (row[4][1][2] & FLAGS["health check"])
    idx = [r[0] for r in ds["rows"]].index(qid)
    page = chunk(out, "q", f"{ds['prefix']}-{idx // ds['chunk']:04d}")[qid]
    assert page["methods"][0]["health"] == ["unsourced_names: Port Veltham"] and page["methods"][1]["health"] == []
    jm = ds["judge_matrix"]
    assert jm["methods"] == labels and jm["criteria"] == ["strict", "generous"]
    assert jm["scores"] == [[0.1, 0.9], [0.2, 0.5]] and jm["tau"] == {"strict/generous": -1.0}


@pytest.mark.parametrize("shape", ["by_method", "rows", "nested"])
def test_judge_matrix_shapes(tmp_path: Path, shape: str) -> None:
    table = {"a": {"strict": 0.1, "generous": 0.7}, "b": {"strict": 0.3, "generous": {"score": 0.5, "n": 40}}}
    data = {"by_method": table,
            "rows": [{"method": m, "criterion": c, "score": v} for m, cs in table.items() for c, v in cs.items()],
            "nested": {"dataset": "x", "matrix": table, "tau": [[1, -1], [-1, 1]]}}[shape]
    path = tmp_path / "judge_matrix.json"
    path.write_text(json.dumps(data))
    jm = read_judge_matrix(path, ["a", "b"])
    assert jm["methods"] == ["a", "b"] and jm["criteria"] == ["strict", "generous"]
    assert jm["scores"] == [[0.1, 0.7], [0.3, 0.5]]
    path.write_text(json.dumps({"whatever": [1, 2, 3]}))
    odd = read_judge_matrix(path, ["a", "b"])
    assert "error" in odd and odd["raw"] == {"whatever": [1, 2, 3]}


def test_the_judge_matrix_commands_own_artifact_is_read_by_its_keys(tmp_path: Path) -> None:
    """evaluation/judge_matrix's judge_matrix.json: scores per run, taus, and a criterion-by-
    criterion table of p-values that the shape guesses once read as the scores (the shipped
    EpBench explorer showed p-values under "strict" and "model_free")."""
    from memeval.evaluation.judge_matrix.matrix import summarize

    class _Run:
        def __init__(self, label: str) -> None:
            self.label, self.path, self.answer_model, self.health = label, tmp_path / label, "m", "ok"
            self.dataset = type("D", (), {"name": "locomo"})()
            self.protocol = type("P", (), {"headline_questions": lambda _, preds: {"q1", "q2", "q3"}})()
            self.questions, self.predictions = {"q1", "q2", "q3"}, []

    per_question = [{"strict": {"q1": 1.0, "q2": 0.0, "q3": 1.0}, "model_free": {"q1": 1.0, "q2": 1.0, "q3": 1.0}},
                    {"strict": {"q1": 0.0, "q2": 0.0, "q3": 1.0}, "model_free": {"q1": 0.0, "q2": 1.0, "q3": 0.0}},
                    {"strict": {"q1": 0.0, "q2": 0.0, "q3": 0.0}, "model_free": {"q1": 1.0, "q2": 1.0, "q3": 0.0}}]
    matrix = summarize([_Run("vanilla"), _Run("gsw"), _Run("seem")], per_question, ["q1", "q2", "q3"],
                       ("strict", "model_free"), "j", {"fresh": 0, "cached": 6})
    assert isinstance(matrix["kendall_p"]["strict"]["model_free"], float)  # the table that was misread
    path = tmp_path / "judge_matrix.json"
    path.write_text(json.dumps(matrix))
    jm = read_judge_matrix(path, ["vanilla", "gsw", "seem"])
    assert jm["methods"] == ["vanilla", "gsw", "seem"] and jm["criteria"] == ["strict", "model_free"]
    assert jm["scores"] == [[pytest.approx(2 / 3), 1.0], [pytest.approx(1 / 3), pytest.approx(1 / 3)],
                            [0.0, pytest.approx(2 / 3)]]
    assert jm["tau"]["strict"]["model_free"] == matrix["kendall_tau"]["strict"]["model_free"]
    del matrix["runs"]  # without its runs, the guesses must not take the p-values either
    path.write_text(json.dumps(matrix))
    assert read_judge_matrix(path, ["vanilla", "gsw", "seem"]).get("methods") != ["strict", "model_free"]


def test_block_headers_name_their_units() -> None:
    assert header_unit("Chapter 11: exhibition", ["1", "11"]) == "11"
    assert header_unit("Chapter 1", ["11"]) is None
    assert header_unit("Session 1 (4:04 pm on 20 January, 2023)", ["1", "10"]) == "1"
    assert header_unit("18: Jon", ["1", "18"]) == "18"
    assert header_unit("Knowledge Graph Data", ["1"]) is None


def test_the_command_writes_the_site_and_refuses_a_non_run(tmp_path: Path, capsys) -> None:
    out = tmp_path / "site"
    assert cli_main.main(["explore", *map(str, LOCOMO_RUNS[:1]), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "locomo: 1 runs, 105 questions" in printed and (out / "index.html").is_file()
    assert cli_main.main(["explore", str(tmp_path), "--out", str(out)]) == 2
    assert "run folder" in capsys.readouterr().err  # the wording is evaluation/runs/scored.py's
    with pytest.raises(ExploreError):
        build_site([], out)


def test_error_bars_are_the_reports_bootstrap_std_and_say_so(ep_site: Path) -> None:
    """The explorer drew 95% intervals (± 1.96 std) where the report draws ± 1 bootstrap std,
    without saying so: now every bar, point and ± is the report's statistic, named as the report
    names it, and a run that failed a health check is marked in the charts as in the report."""
    (ds,) = site_data(ep_site)["datasets"]
    runs = {r.label: r for r in load_runs(EPBENCH_RUNS)}
    for m in ds["methods"]:
        saved = runs[m["label"]].metrics["overall"]
        v, std = saved["f1"], saved["f1_std"]
        assert m["headline"]["std"] == pytest.approx(std)
        assert m["headline"]["lo"] == pytest.approx(max(0.0, v - std)) and m["headline"]["hi"] == pytest.approx(min(1.0, v + std))
        assert m["failed"] == (runs[m["label"]].health is not None and runs[m["label"]].health.status == "fail")
    spec = json.dumps(ds["charts"], ensure_ascii=False)
    assert "95%" not in spec and "F1 (± bootstrap std)" in spec
    assert "± = bootstrap std over questions" in ds["interval_note"] and "not a 95% interval" in ds["interval_note"]
    rows = [r for layer in ds["charts"]["by_group"]["layer"] for r in layer.get("data", {}).get("values", [])]
    rows = rows or ds["charts"]["by_group"]["data"]["values"]
    failed = {m["label"] for m in ds["methods"] if m["failed"]}
    assert {r["method"] for r in rows if r["health"] == "failed a health check"} == failed
