"""The explorer in a real browser: Debian's Chromium, headless, driven by Playwright (no browser
download: it is pointed at /usr/bin/chromium), opening the site built from the EpBench bundle's run
folders from file://. .ci/run installs Chromium when it is missing; this test is skipped only
where it could not be installed, and says so."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from explore_site import (
    EPBENCH_RUNS,
    chromium_page,
    chromium_path,
    gold_block_question,
    saved_labels,
)

from memeval.evaluation.explore import build_site

CHROMIUM = chromium_path()
if not Path(CHROMIUM).exists():
    pytest.skip(f"no Chromium at {CHROMIUM} (.ci/run installs Debian's `chromium`)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (dev extra) is not installed")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("explore-browser") / "site"
    build_site(EPBENCH_RUNS, out)
    return out


@pytest.fixture(scope="module")
def page(site: Path):
    with chromium_page() as pg:
        yield pg


def _methods() -> list[str]:
    return [json.loads((r / "meta.json").read_text())["method"] for r in EPBENCH_RUNS]


def test_the_overview_lists_every_method_and_draws_its_charts(site: Path, page, tmp_path: Path) -> None:
    page.goto((site / "index.html").as_uri())
    page.wait_for_selector("#runs > tbody > tr")
    shown = page.eval_on_selector_all("#runs > tbody > tr", "rows => rows.map(r => r.dataset.method)")
    assert sorted(shown) == sorted(_methods())
    page.wait_for_selector("#chart-by_group canvas", timeout=30_000)
    assert page.locator(".chart canvas").count() >= 3
    shot = Path(os.environ.get("MEMEVAL_SHOTS") or tmp_path) / "explore_overview.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")
    assert page.errors == []


def test_filtering_to_one_failure_label_shows_its_questions(site: Path, page) -> None:
    page.goto((site / "index.html").as_uri() + "#/questions?d=0")
    page.wait_for_selector("#qtable tbody tr")
    total = len({json.loads(line)["question_id"] for r in EPBENCH_RUNS
                 for line in (r / "predictions.jsonl").read_text().splitlines()})
    assert page.inner_text("#count") == str(total)
    i = next(k for k, r in enumerate(EPBENCH_RUNS) if r.name.startswith("gsw"))
    want = sorted(q for q, label in saved_labels(EPBENCH_RUNS[i]).items() if label == "retrieval_miss")
    assert 0 < len(want) < total
    page.select_option("select[name=label]", "retrieval_miss")
    page.wait_for_selector("select[name=lm]")
    page.select_option("select[name=lm]", _methods()[i])  # options are method names (URLs name methods)
    page.wait_for_function(f"document.getElementById('count').textContent === '{len(want)}'")
    rows = page.eval_on_selector_all("#qtable tbody tr", "rows => rows.map(r => r.dataset.qid)")
    assert sorted(rows) == want
    # A right, B wrong: every row's cells agree with the saved labels
    j = next(k for k, r in enumerate(EPBENCH_RUNS) if r.name.startswith("vanilla"))
    a, b = saved_labels(EPBENCH_RUNS[j]), saved_labels(EPBENCH_RUNS[i])
    expected = sorted(q for q in a if a[q] == "correct" and b.get(q) not in (None, "correct"))
    page.goto((site / "index.html").as_uri() + f"#/questions?d=0&a={j}&rel=rw&b={i}")
    page.wait_for_function(f"document.getElementById('count').textContent === '{len(expected)}'")
    assert sorted(page.eval_on_selector_all("#qtable tbody tr", "rows => rows.map(r => r.dataset.qid)")) == expected
    assert page.errors == []


def test_a_question_page_highlights_the_gold_units(site: Path, page, tmp_path: Path) -> None:
    i = next(k for k, r in enumerate(EPBENCH_RUNS) if r.name.startswith("vanilla"))
    qid, unit = gold_block_question(EPBENCH_RUNS[i])
    page.goto((site / "index.html").as_uri() + f"#/q?d=0&id={qid}")
    page.wait_for_selector(".card")
    card = page.locator(f".card[data-method='{_methods()[i]}']")
    marked = card.locator(".block.gold-unit")
    assert marked.count() >= 1
    assert unit in [marked.nth(k).get_attribute("data-unit") for k in range(marked.count())]
    assert card.locator(".block:not(.gold-unit)").count() >= 1  # the other chapters are not marked
    gold_bg = marked.first.evaluate("e => getComputedStyle(e).backgroundColor")
    assert gold_bg not in ("rgba(0, 0, 0, 0)", "transparent")
    assert page.locator("#gold-units .chip.gold").count() >= 1
    shot = Path(os.environ.get("MEMEVAL_SHOTS") or tmp_path) / "explore_question.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot: {shot}")
    assert page.errors == []
