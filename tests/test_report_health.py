"""The health column and the report's corrections, on scripted and hand-built run folders: a run
that failed a health check is never starred (--allow-degenerate lifts it), every table shows
health, an empty cost figure is not drawn, API-equivalent USD prices every token, and LoCoMo's
paired n is its headline's n."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import v1_bundle
from sweep_runs import perfect_copy, run_dir, sweep_root

from memeval.evaluation.compare import main as compare_main
from memeval.evaluation.report import build_report
from memeval.evaluation.report.command import main as report_main
from memeval.evaluation.report.prices import Reference, api_equivalent
from memeval.evaluation.report.tables import star_allowed, table3
from memeval.evaluation.runs.health_file import Check, Health
from memeval.evaluation.runs.index_usage import record_session
from memeval.evaluation.runs.scored import load_run

FAIL = Check("distinct_contexts", "context", "fail", 0.2, 0.5, "9 distinct contexts for 40 questions")
WARN = Check("looping_answers", "answer", "warn", 0.1, 0.05, "4 of 40 answers repeat an item")


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return sweep_root(tmp_path_factory.mktemp("sweep"))


@pytest.fixture()
def pair(root, tmp_path) -> tuple[Path, Path]:
    """embedding_rag (the reference) and an oracle copy better on every question: a starred difference."""
    base = tmp_path / "epbench20" / "embedding_rag-ref"
    shutil.copytree(run_dir(root, "embedding_rag"), base, ignore=shutil.ignore_patterns("wandb", "health.json"))
    better = perfect_copy(base, tmp_path / "epbench20" / "oracle-judge", "oracle")
    return base, better


def _health(run: Path, *checks: Check) -> None:
    (run / "health.json").write_text(json.dumps(Health(list(checks)).to_dict()))


def _paired_row(md: Path, label: str) -> list[str]:
    section = md.read_text().split("### Paired differences")[1].split("###")[0]
    row = next(r for r in section.splitlines() if r.startswith(f"| {label} "))
    return [c.strip() for c in row.strip().strip("|").split("|")]


def test_a_failed_run_is_never_starred_and_allow_degenerate_lifts_it(pair, tmp_path) -> None:
    base, better = pair
    md, _ = build_report([base, better], tmp_path / "ok", reference=base)
    cells = _paired_row(md, "oracle")
    assert cells[9] == "*" and cells[10] == "not checked"  # significant, healthy enough: starred
    _health(better, FAIL)
    md, _ = build_report([base, better], tmp_path / "failed", reference=base)
    cells = _paired_row(md, "oracle")
    assert cells[9] == "" and cells[10] == f"fail: {FAIL.message}"
    text = md.read_text()
    assert "are not starred" in text and "Not starred though the interval excludes 0: oracle" in text
    # the reference failing withholds the star as well
    better.joinpath("health.json").unlink()
    _health(base, FAIL)
    assert _paired_row(build_report([base, better], tmp_path / "ref", reference=base)[0], "oracle")[9] == ""
    assert report_main([str(base), str(better), "--reference", str(base), "--allow-degenerate",
                        "--out", str(tmp_path / "lifted")]) == 0
    assert _paired_row(tmp_path / "lifted" / "report.md", "oracle")[9] == "*"
    a, b = load_run(better), load_run(base)
    assert not star_allowed(a, b) and star_allowed(a, b, allow_degenerate=True)


def test_every_report_table_has_a_health_column(pair, tmp_path) -> None:
    base, better = pair
    _health(better, WARN)
    md, _ = build_report([base, better], tmp_path / "rep", reference=base)
    tables = [t for t in md.read_text().split("### ")[1:]]
    # Table 2 shape, precision / recall, the stratified overall, Table 3 shape, paired, paired under each rule
    assert len(tables) == 6
    for t in tables:
        head = next(ln for ln in t.splitlines() if ln.startswith("| method"))
        assert head.rstrip().endswith("| health |"), head
        rows = [ln for ln in t.splitlines() if ln.startswith("| oracle")]
        assert rows and all(f"warn: {WARN.message}" in r for r in rows), t[:300]
        unchecked = [ln for ln in t.splitlines() if ln.startswith("| embedding_rag") and "not checked" in ln]
        assert unchecked or "Reference health: not checked" in t  # the paired table's reference is no row


def test_compare_shows_health_and_withholds_the_star(pair, tmp_path, capsys) -> None:
    base, better = pair
    _health(better, FAIL)
    assert compare_main([str(base), str(better), "--reference", str(base)]) == 0
    out = capsys.readouterr().out
    table = [ln for ln in out.splitlines() if ln.startswith("| oracle")]
    assert f"fail: {FAIL.message}" in table[0]  # the comparison table's health column
    paired = table[1].strip("|").split("|")
    assert paired[7].strip() == "" and "are not starred" in out
    assert compare_main([str(base), str(better), "--reference", str(base), "--allow-degenerate"]) == 0
    paired = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| oracle")][1]
    assert paired.strip("|").split("|")[7].strip() == "*"


def test_a_health_cell_names_every_check_at_its_status(pair, capsys) -> None:
    """A run failing five checks must not read as failing one: the cell names the others (and not
    the warnings, which a fail outranks)."""
    base, better = pair
    second = Check("unit_dates", "context", "fail", 1.0, 0.5, "105 of 105 contexts show no date")
    _health(better, FAIL, WARN, second)
    assert compare_main([str(base), str(better), "--reference", str(base)]) == 0
    row = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| oracle"))
    assert f"fail: {FAIL.message} (and 1 more: unit_dates)" in row
    assert "looping_answers" not in row
    warned = Health([WARN, Check("refusals", "answer", "warn", 0.3, 0.25, "12 of 40 declined")])
    assert warned.mark() == f"warn: {WARN.message} (and 1 more: refusals)"


def test_a_cost_figure_with_nothing_to_show_is_not_drawn(root, tmp_path) -> None:
    runs = []
    for m in ("vanilla", "embedding_rag"):
        dst = tmp_path / "epbench20" / f"{m}-zero"
        shutil.copytree(run_dir(root, m), dst, ignore=shutil.ignore_patterns("wandb", "health.json"))
        (dst / "usage.json").write_text(json.dumps({"price_table": "t", "stages": {}, "totals": {}}))
        (dst / "usage.jsonl").unlink(missing_ok=True)
        (dst / "index.json").unlink(missing_ok=True)  # no index folder, so no index record either
        runs.append(dst)
    out = tmp_path / "rep"
    (out / "figures").mkdir(parents=True)
    (out / "figures" / "epbench20_cost.png").write_bytes(b"stale")  # an earlier report's figure goes too
    md, html = build_report(runs, out)
    assert sorted(p.name for p in (out / "figures").iterdir()) == ["epbench20_by_group.png",
                                                                    "epbench20_frontier.png"]
    text = md.read_text()
    assert "cost per method" not in text and "No cost figure" in text
    assert html.read_text().count("data:image/png;base64,") == 2
    # with tokens to price the same runs get their API-equivalent cost figure back
    build_report([run_dir(root, m) for m in ("vanilla", "embedding_rag")], tmp_path / "priced")
    assert (tmp_path / "priced" / "figures" / "epbench20_cost.png").exists()


def test_api_equivalent_usd_prices_every_token_at_the_reference(root, tmp_path) -> None:
    run = tmp_path / "runs" / "epbench20" / "embedding_rag-priced"
    shutil.copytree(run_dir(root, "embedding_rag"), run, ignore=shutil.ignore_patterns("wandb", "health.json"))
    (run / "usage.jsonl").unlink()

    def bucket(p: int, c: int) -> dict:
        return {"calls": 1, "prompt_tokens": p, "completion_tokens": c, "cost_usd": 0.0}

    usage = {"price_table": "local", "unpriced_models": [], "totals": {"fresh": bucket(0, 0), "cached": bucket(0, 0)},
             "stages": {"answer": {"by_model": {"scripted-llm": {"fresh": bucket(600_000, 100_000),
                                                                   "cached": bucket(400_000, 0)}}},
                        "retrieve": {"by_model": {"hashed-bow": {"cached": bucket(500_000, 0)}}},
                        "judge": {"by_model": {"scripted-judge": {"fresh": bucket(0, 50_000)}}},
                        "index": {"by_model": {"scripted-llm": {"cached": bucket(7, 7)}}}}}  # a reuse: ignored
    (run / "usage.json").write_text(json.dumps(usage))
    store = tmp_path / "runs" / "_indexes" / "embedding_rag-h"
    (run / "index.json").write_text(json.dumps({"corpora": [{"corpus_id": "epbench20"}],
                                                "index_folder": "runs/_indexes/embedding_rag-h"}))
    build = [{"model": "scripted-llm", "prompt_tokens": 1_000_000, "completion_tokens": 250_000, "cached": False},
             {"model": "scripted-llm", "prompt_tokens": 1_000_000, "completion_tokens": 250_000, "cached": True}]
    record_session(store, "epbench20", build, "t0")
    ref = Reference("test-prices", {"chat-api": {"input": 2.0, "output": 8.0}, "emb-api": {"input": 0.5}},
                    "chat-api", "emb-api")
    r = load_run(run)
    eq = api_equivalent(r, ref)
    # answer 1M in + 0.1M out; retrieve 0.5M embedding tokens; judge 0.05M out; index 2M in + 0.5M out
    assert eq["stages"] == pytest.approx({"answer": 2.0 + 0.8, "retrieve": 0.25, "judge": 0.4, "index": 4.0 + 4.0})
    t3 = table3([r], ref)
    col = t3.header.index("API-equivalent USD (chat-api + emb-api, price table test-prices)")
    assert t3.rows[0][col] == f"{sum(eq['stages'].values()):.4f}" == "11.4500"
    assert t3.rows[0][t3.header.index("index tokens")] == "2,500,000"  # the record, not this run's 14
    assert t3.rows[0][t3.header.index("index calls")] == "2"


def test_locomo_paired_n_is_the_headline_n_and_categories_go_by_name(tmp_path) -> None:
    runs = []
    for m in ("embedding_rag", "lightrag"):  # the v1 LoCoMo bundle's runs (tests/fixtures/v1_bundles)
        (src,) = sorted((v1_bundle("locomo-local") / "runs" / "locomo").glob(f"{m}-*"))
        runs.append(Path(shutil.copytree(src, tmp_path / "locomo" / src.name)))
    md, _ = build_report(runs, tmp_path / "rep", reference=runs[0])
    text = md.read_text()
    ref = load_run(runs[0])
    headline_n = ref.metrics["overall"]["n"]
    assert headline_n < len(ref.predictions)  # category 5 is outside the headline here
    assert _paired_row(md, "lightrag")[1] == str(headline_n)
    table = text.split("### LoCoMo per category")[1].split("###")[0]
    labels = {ln.split("|")[2].strip() for ln in table.splitlines() if ln.startswith("| lightrag")}
    assert {"multi-hop", "temporal", "single-hop", "adversarial (decline check, not J)", "overall"} == labels


def test_figures_mark_a_failed_run_in_their_legends(pair, tmp_path, monkeypatch) -> None:
    """The frontier and by-group figures drew a broken run's score like any other (the conv-30
    vendor bundle: three failed indexes plotted as plain points); the legend now says health."""
    import matplotlib.axes

    base, better = pair
    _health(better, FAIL)
    labels: list[str] = []
    real = matplotlib.axes.Axes.legend

    def spy(self, *args, **kwargs):
        legend = real(self, *args, **kwargs)
        labels.extend(t.get_text() for t in legend.get_texts())
        return legend

    monkeypatch.setattr(matplotlib.axes.Axes, "legend", spy)
    build_report([base, better], tmp_path / "rep", reference=base)
    assert labels.count("oracle (health: fail)") >= 2 and "oracle" not in labels  # frontier and by group
    assert "embedding_rag" in labels  # no health.json: not checked, labelled as before


def test_figures_draw_a_stratified_subsets_weighted_overall(tmp_path, monkeypatch) -> None:
    """v1's 40 EpBench questions are a stratified subset of 456: the by-group figure called their
    plain mean "overall" and the frontier plotted it, while the headline the paired table tests is
    the population-weighted overall. The figures now draw that one, named, beside the plain mean."""
    import matplotlib.axes

    from memeval.evaluation.report import figures
    from memeval.evaluation.runs.scored import load_runs

    runs = load_runs(sorted((v1_bundle("epbench20-local") / "runs" / "epbench20").iterdir()))
    p = runs[0].presentation
    ticks: list[str] = []
    bars: list[list[float]] = []
    points: list[float] = []
    ylabels: list[str] = []
    real_ticks, real_bar, real_err, real_y = (matplotlib.axes.Axes.set_xticks, matplotlib.axes.Axes.bar,
                                              matplotlib.axes.Axes.errorbar, matplotlib.axes.Axes.set_ylabel)

    def spy_ticks(self, x, labels=None, **kw):
        ticks.extend(t.replace("\n", " ") for t in labels or [])
        return real_ticks(self, x, labels, **kw)

    def spy_bar(self, x, height, *a, **kw):
        bars.append(list(height))
        return real_bar(self, x, height, *a, **kw)

    def spy_err(self, x, y, *a, **kw):
        points.extend(y)
        return real_err(self, x, y, *a, **kw)

    def spy_y(self, label, *a, **kw):
        ylabels.append(label)
        return real_y(self, label, *a, **kw)

    monkeypatch.setattr(matplotlib.axes.Axes, "set_xticks", spy_ticks)
    monkeypatch.setattr(matplotlib.axes.Axes, "bar", spy_bar)
    monkeypatch.setattr(matplotlib.axes.Axes, "errorbar", spy_err)
    monkeypatch.setattr(matplotlib.axes.Axes, "set_ylabel", spy_y)
    figures.by_group(runs, p, tmp_path / "g.png")
    points.clear()  # bar() draws its error bars with errorbar() too
    figures.frontier(runs, p, tmp_path / "f.png")
    assert ticks[-2:] == ["overall (unweighted)", "overall (weighted)"]
    weighted = [r.weighted_overall["f1"] for r in runs]
    assert [b[-1] for b in bars] == pytest.approx(weighted)
    assert [b[-2] for b in bars] == pytest.approx([r.metrics["overall"]["f1"] for r in runs])
    assert weighted != pytest.approx([r.metrics["overall"]["f1"] for r in runs])
    assert points == pytest.approx([w for r, w in zip(runs, weighted, strict=True) if r.mean_context_tokens])
    assert "weighted by population share" in ylabels[-1]
