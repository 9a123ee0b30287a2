"""`memeval judge-matrix` on scripted runs: four criteria, Kendall tau, the artifact, and a
second matrix that the cache makes free."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import run_cli, scripted_overrides
from scripted_server import ScriptedServer

from memeval.cli import judge_matrix
from memeval.evaluation.judge_matrix.criteria import CRITERIA, messages
from memeval.evaluation.judge_matrix.matrix import kendall
from memeval.evaluation.judge_matrix.render import figure, table
from memeval.evaluation.report.build import ReportError, build_report
from memeval.evaluation.runs.health_file import read_health

METHODS = ("vanilla", "embedding_rag")


@pytest.fixture(scope="module")
def server():  # noqa: ANN201
    """One scripted server for the runs and the matrices: an unpinned endpoint is part of a cache
    key, so the matrix's strict criterion finds the runs' own judge calls only at the same URL."""
    with ScriptedServer() as s:
        yield s


@pytest.fixture(scope="module")
def made(tmp_path_factory, data_dir: Path, server: ScriptedServer) -> dict[str, list[Path]]:  # noqa: ANN001
    """Two methods on EpBench-20 (6 questions) and on LoCoMo conv-30 (8 questions), scripted."""
    root = tmp_path_factory.mktemp("matrix")
    for extra in (["dataset=epbench20", "subset.n=6"],
                  ["dataset=locomo", "dataset.loader.conversations=[conv-30]", "subset.n=8"]):
        r = run_cli(["-m", f"method={','.join(METHODS)}", *extra, *scripted_overrides(server, root, data_dir)])
        assert r.returncode == 0, r.stderr[-3000:]
    return {name: sorted((root / "runs" / name).glob("*-*")) for name in ("epbench20", "locomo")}


def _matrix(runs: list[Path], server: ScriptedServer, out: Path, data_dir: Path, cache: Path,
            extra: tuple[str, ...] = ()) -> dict:
    argv = [*map(str, runs), *extra, "--judge", "openai_compatible", "--cache", str(cache), "--data-dir", str(data_dir),
            "--out", str(out), "--override", f"judge.base_url={server.base_url}", "judge.model=scripted-judge"]
    assert judge_matrix.main(argv) == 0
    return json.loads((out / "judge_matrix.json").read_text())


@pytest.mark.parametrize("dataset", ["epbench20", "locomo"])
def test_matrix_of_scripted_runs(made, server: ScriptedServer, dataset: str, data_dir: Path, tmp_path: Path,  # noqa: ANN001
                                 capsys) -> None:
    runs = made[dataset]
    assert len(runs) == 2
    cache = runs[0].parents[2] / "cache.sqlite"  # the runs' own cache: the strict criterion's calls are there
    before = server.count("/v1/chat/completions")
    m = _matrix(runs, server, tmp_path / "out", data_dir, cache)
    first = server.count("/v1/chat/completions") - before
    out = capsys.readouterr().out
    again = _matrix(runs, server, tmp_path / "again", data_dir, cache)
    assert server.count("/v1/chat/completions") - before == first  # a second matrix is free
    n = m["n_questions"]
    preds = [json.loads(x) for x in (runs[0] / "predictions.jsonl").read_text().splitlines()]
    # LoCoMo's headline leaves category 5 out (a decline scores there): so does the matrix
    headline = {p["question_id"] for p in preds if dataset == "epbench20" or p["category"] != 5}
    assert dataset == "epbench20" or len(headline) < len(preds), "the scripted LoCoMo subset has no category 5"
    assert n == len(headline) and (dataset != "epbench20" or n == 6) and set(m["criteria"]) == set(CRITERIA)
    assert m["scope"] == "headline" and f"{n} questions every run answered that the headline counts" in table(m)
    # the LLM criteria paid at most one call per answer (two runs' equal answers share one); the
    # strict criterion's calls were the runs' own, so its judge prompt reached the server no more
    chats = [r for r in server.requests if r["path"] == "/v1/chat/completions"]
    sent = [r["body"]["messages"][0]["content"] for r in chats[before:before + first]]
    assert 0 < first <= 2 * n * len(runs) and m["calls"]["fresh"] == first
    assert all("reference answer" in s or "right track" in s for s in sent)
    assert again["calls"] == {"fresh": 0, "cached": m["calls"]["fresh"] + m["calls"]["cached"]}
    assert {k: v for k, v in again.items() if k != "calls"} == {k: v for k, v in m.items() if k != "calls"}
    for run, path in zip(m["runs"], runs, strict=True):
        metrics = json.loads((path / "metrics.json").read_text())
        assert all(0 <= run["scores"][c] <= 1 for c in CRITERIA)
        assert run["judge_failed"] == dict.fromkeys(CRITERIA, 0)
        assert run["answer_model"] == json.loads((path / "meta.json").read_text())["answer_model"]
        assert run["health"] == (read_health(path).mark() if read_health(path) else "not checked")
        assert run["scores"]["generous"] >= run["scores"]["per_type"]  # the scripted rules' order
        per_q = m["per_question"][run["method"]]
        if dataset == "epbench20":  # the runs were grounded with version 2 and scored lenient
            assert run["scores"]["strict"] == pytest.approx(metrics["by_credit"]["grounded"]["f1"])
            assert run["scores"]["model_free"] == pytest.approx(metrics["by_credit"]["deterministic"]["f1"])
        else:
            judged = [json.loads(x) for x in (path / "judgments.jsonl").read_text().splitlines()]
            assert per_q["strict"] == {j["question_id"]: float(j["correct_grounded"]) for j in judged
                                       if j["question_id"] in headline}
    tau = m["kendall_tau"]
    assert all(tau[a][b] == tau[b][a] for a in CRITERIA for b in CRITERIA)
    assert "| method | strict | per_type | generous | model_free |" in out and "Kendall's tau" in out
    assert (tmp_path / "out" / "judge_matrix.png").stat().st_size > 1000
    # the report shows the saved matrix in its runs' section (table and figure), judging nothing
    calls = server.count("/v1/chat/completions")
    md, _ = build_report(runs, tmp_path / "rep", judge_matrices=[tmp_path / "out"])
    text = md.read_text()
    score_table = text.split("### Judge-sensitivity matrix")[1].split("### ")[0]
    first_row = next(ln for ln in score_table.splitlines() if ln.startswith(f"| {m['runs'][0]['method']} |"))
    strict = m["runs"][0]["scores"]["strict"]
    assert f"| {strict:.3f} (" in first_row and "runs: 2 of this section's 2" in score_table
    assert "### Kendall tau between the criteria's method rankings" in text
    assert (tmp_path / "rep" / "figures" / f"{dataset}_judge_matrix.png").stat().st_size > 1000
    assert server.count("/v1/chat/completions") == calls
    half = _matrix(runs, server, tmp_path / "half", data_dir, cache, ("--every", "2"))
    assert half["n_questions"] == (n + 1) // 2 and half["n_shared"] == n and half["calls"]["fresh"] == 0
    for method, crits in half["per_question"].items():  # the same questions' verdicts, from the cache
        assert all(m["per_question"][method][c][q] == v for c, qs in crits.items() for q, v in qs.items())
    assert f"1 in 2 of the {n} every run answered" in table(half)
    other = made["locomo" if dataset == "epbench20" else "epbench20"]
    with pytest.raises(ReportError, match="judge matrix of runs not in this report"):
        build_report(other, tmp_path / "rep2", judge_matrices=[tmp_path / "out"])


def test_kendall_tau_hand_computed() -> None:
    assert kendall([0.1, 0.2, 0.3], [0.3, 0.4, 0.9]) == (pytest.approx(1.0), pytest.approx(0.333, abs=1e-3))
    tau, _ = kendall([0.1, 0.2, 0.3, 0.4], [0.2, 0.1, 0.4, 0.3])  # 4 concordant, 2 discordant pairs
    assert tau == pytest.approx((4 - 2) / 6)
    assert math.isnan(kendall([0.5], [0.2])[0]) and math.isnan(kendall([0.1, float("nan")], [0.2, 0.3])[0])


def test_prompts_use_invented_examples_and_one_rule_per_type() -> None:
    generous = messages("generous", "default", "Q?", "REF", "REPLY")
    assert "rhubarb pie" in generous[0]["content"] and "Reference answer: REF" in generous[1]["content"]
    systems = {t: messages("per_type", t, "Q?", "R", "A")[0]["content"]
               for t in ("default", "temporal", "update", "preference", "abstention", "list", "account")}
    assert len(set(systems.values())) == len(systems) and "off by one" in systems["temporal"]


def test_table_from_a_saved_matrix() -> None:
    m = {"dataset": "d", "n_questions": 3, "judge": "j", "criteria": {"strict": "s", "generous": "g"},
         "runs": [{"method": "a", "scores": {"strict": 0.5, "generous": 0.9}, "judge_failed": {"strict": 0, "generous": 1}},
                  {"method": "b", "scores": {"strict": 0.6, "generous": 0.8}, "judge_failed": {"strict": 0, "generous": 0}}],
         "ranking": {"strict": ["b", "a"], "generous": ["a", "b"]},
         "kendall_tau": {"strict": {"strict": 1.0, "generous": -1.0}, "generous": {"strict": -1.0, "generous": 1.0}},
         "calls": {"fresh": 2, "cached": 4}}
    text = table(m)  # format 1: no answering model or health recorded, and the table says so
    assert "| a | 0.500 (2) | 0.900 (1) [1 failed] | not recorded" in text and "| strict | 1.00 | -1.00 |" in text
    assert "answering model: not recorded" in text
    assert "3 questions every run answered" in text and "adversarial and unanswerable ones included" in text
    m["runs"].append({"method": "c", "scores": {"strict": 0.6, "generous": None}, "judge_failed": {"strict": 0, "generous": 0}})
    text = table(m)  # equal scores share a rank
    assert "| b | 0.600 (1=) |" in text and "| c | 0.600 (1=) | – |" in text and "| a | 0.500 (3) |" in text


def test_a_matrix_names_each_runs_answering_model_and_health(tmp_path: Path) -> None:
    """A matrix copied out of the bundle must not show a failed run's score as a result."""
    m = {"dataset": "d", "n_questions": 3, "judge": "j", "criteria": {"strict": "s", "model_free": "g"},
         "runs": [{"method": "a", "answer_model": "m1", "health": "ok", "grounding_version": 4,
                   "scores": {"strict": 0.5, "model_free": 0.9}, "judge_failed": {"strict": 0, "model_free": 0}},
                  {"method": "b", "answer_model": "m2", "health": "fail: 18 of 19 units without relationships",
                   "grounding_version": 4,
                   "scores": {"strict": 0.6, "model_free": 0.8}, "judge_failed": {"strict": 0, "model_free": 0}}],
         "ranking": {"strict": ["b", "a"], "model_free": ["a", "b"]},
         "kendall_tau": {"strict": {"strict": 1.0, "model_free": -1.0}, "model_free": {"strict": -1.0, "model_free": 1.0}},
         "calls": {"fresh": 0, "cached": 6}}
    text = table(m)
    assert "answering model: m1 | m2  **DIFFERS**; judge: j; strict grounding v4" in text
    assert "| b | 0.600 (1) | 0.800 (2) | fail: 18 of 19 units without relationships |" in text
    assert figure(m, tmp_path / "m.png").stat().st_size > 1000
