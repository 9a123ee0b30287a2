"""The explorer with ten methods at 1,400 px, in headless Chromium (Debian's, driven by Playwright as
in test_explore_browser.py): built from results/epbench20-local's ten runs, nothing overflows the
window, URLs name methods (`a=embedding_rag`; an older index URL still resolves), the picker and
the health toggle choose the columns, a question page sets any two methods side by side, and every
mark on a page is explained in its legend. Skipped, saying why, where Chromium or Playwright is
missing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from explore_site import chromium_page, chromium_path, saved_labels

from memeval.evaluation.explore import build_site
from memeval.evaluation.runs.health_file import read_health

ROOT = Path(__file__).resolve().parents[1]
RUNS = sorted(p for p in (ROOT / "results" / "epbench20-local" / "runs" / "epbench20").iterdir() if p.is_dir())
CHROMIUM = chromium_path()
if not Path(CHROMIUM).exists():
    pytest.skip(f"no Chromium at {CHROMIUM} (`apt-get install -y chromium`)", allow_module_level=True)
if len(RUNS) != 10:
    pytest.skip(f"results/epbench20-local holds {len(RUNS)} runs, not the ten this test is about", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (dev extra) is not installed")

WIDTH = 1400
# Elements whose right edge is past the window, unless a scrolling box that ends inside the window
# clips them (the question table's own box when more columns are picked than fit).
OVERFLOW = """() => {
  const W = window.innerWidth, bad = [];
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (!r.width || r.right <= W + 1) continue;
    let p = el.parentElement, clipped = false;
    while (p && !clipped) {
      clipped = getComputedStyle(p).overflowX !== "visible" && p.getBoundingClientRect().right <= W + 1;
      p = p.parentElement;
    }
    if (!clipped) bad.push(el.tagName.toLowerCase() + "." + el.className + " right " + Math.round(r.right));
  }
  return { page: document.documentElement.scrollWidth, bad: bad.slice(0, 8) };
}"""
# The marks a page draws, as their classes name them, outside and inside its legend box.
MARKS = """() => {
  const vocab = c => c.startsWith("l-") || ["ok", "warn", "fail", "not_measured", "none", "mini", "flag", "gold",
    "gold-unit", "gold-item", "c1", "c0", "cp", "tag"].includes(c);
  const key = el => Array.from(el.classList).filter(vocab).sort().join(" ");
  const sel = ".badge, .flag, .chip.gold, .block.gold-unit, mark.gold-item, td.c1, td.c0, td.cp, .credit, .tag";
  const outside = new Set(), inside = new Set();
  for (const el of document.querySelectorAll(sel)) {
    const k = key(el);
    if (k) (el.closest(".legend-box") ? inside : outside).add(k);
  }
  return { outside: Array.from(outside), inside: Array.from(inside) };
}"""


def _method(run: Path) -> str:
    return json.loads((run / "meta.json").read_text(encoding="utf-8"))["method"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    """The ten runs, copied; one without its health.json, so that hiding the failed runs leaves one
    (every bundled run may fail a check: the page must still show a run whose health is unknown)."""
    root = tmp_path_factory.mktemp("explore-width-runs")
    copies = [Path(shutil.copytree(r, root / r.name)) for r in RUNS]
    (copies[-1] / "health.json").unlink(missing_ok=True)
    return copies


@pytest.fixture(scope="module")
def site(tmp_path_factory, runs: list[Path]) -> Path:
    out = tmp_path_factory.mktemp("explore-width") / "site"
    build_site(runs, out)
    return out


@pytest.fixture(scope="module")
def page(site: Path):
    with chromium_page(WIDTH) as pg:
        pg.open = lambda hash_: (pg.goto((site / "index.html").as_uri() + "#/" + hash_), pg.reload())
        yield pg


def _fits(page) -> None:
    found = page.evaluate(OVERFLOW)
    assert found["page"] <= WIDTH and found["bad"] == [], found


def _explained(page) -> None:
    marks = page.evaluate(MARKS)
    assert set(marks["outside"]) <= set(marks["inside"]), marks


def _columns(page) -> list[str]:
    return page.eval_on_selector_all("#qtable thead th.m", "ths => ths.map(t => t.dataset.method)")


def test_ten_methods_fit_1400px_and_the_picker_chooses_the_columns(page) -> None:
    page.open("questions?d=0")
    page.wait_for_selector("#qtable tbody tr")
    _fits(page)
    shown = _columns(page)
    assert 2 <= len(shown) < 10  # ten do not fit: the columns that do, none cut off
    assert page.evaluate("(() => { const w = document.querySelector('.qwrap'); return w.scrollWidth <= w.clientWidth; })()")
    _explained(page)
    # A and B are kept when the columns are cut: the last two runs are named
    page.open("questions?d=0&a=vanilla&b=seem")
    page.wait_for_selector("#qtable tbody tr")
    assert {"vanilla", "seem"} <= set(_columns(page))
    # untick a method in the picker: the URL names the others, and its column goes
    page.open("questions?d=0")
    page.wait_for_selector("#qtable tbody tr")
    first = _columns(page)[0]
    page.uncheck(f"#picker input[name=method][value={first}]")
    page.wait_for_function("location.hash.includes('methods=')")
    page.wait_for_selector("#qtable tbody tr")
    assert first not in _columns(page) and first not in page.evaluate("decodeURIComponent(location.hash)")
    # all ten picked: the table scrolls inside its own box, the page does not
    page.open("questions?d=0&methods=" + ",".join(_method(r) for r in RUNS))
    page.wait_for_selector("#qtable tbody tr")
    assert sorted(_columns(page)) == sorted(_method(r) for r in RUNS)
    _fits(page)
    assert page.evaluate("document.querySelector('.qwrap').classList.contains('scroll-x')")
    assert page.errors == []


def test_method_names_in_the_url_select_those_methods(page) -> None:
    labels = {_method(r): saved_labels(r) for r in RUNS}
    a, b = labels["embedding_rag"], labels["gsw"]
    want = sorted(q for q in a if a[q] == "correct" and b.get(q) not in (None, "correct"))
    assert want
    page.open("questions?d=0&a=embedding_rag&rel=rw&b=gsw")
    page.wait_for_function(f"document.getElementById('count').textContent === '{len(want)}'")
    assert sorted(page.eval_on_selector_all("#qtable tbody tr", "rows => rows.map(r => r.dataset.qid)")) == want
    assert page.input_value("select[name=a]") == "embedding_rag" and page.input_value("select[name=b]") == "gsw"
    old = [_method(r) for r in RUNS]  # an older URL's indices still mean the same methods
    page.open(f"questions?d=0&a={old.index('embedding_rag')}&rel=rw&b={old.index('gsw')}")
    page.wait_for_function(f"document.getElementById('count').textContent === '{len(want)}'")
    assert page.input_value("select[name=a]") == "embedding_rag"
    assert page.errors == []


def test_a_question_page_sets_two_chosen_methods_side_by_side(page) -> None:
    qid = next(iter(saved_labels(RUNS[0])))
    page.open(f"q?d=0&id={qid}&a=embedding_rag&b=gsw")
    page.wait_for_selector("#pair .card")
    sides = page.eval_on_selector_all("#pair .card", "cs => cs.map(c => [c.dataset.side, c.dataset.method])")
    assert sides == [["A", "embedding_rag"], ["B", "gsw"]]
    boxes = page.eval_on_selector_all("#pair .card", "cs => cs.map(c => { const r = c.getBoundingClientRect(); return [r.left, r.top]; })")
    assert boxes[0][1] == boxes[1][1] and boxes[0][0] < boxes[1][0]  # one row: side by side
    _fits(page)
    _explained(page)
    page.select_option("select[name=b]", "seem")
    page.wait_for_function("location.hash.includes('b=seem')")
    page.wait_for_selector("#pair .card[data-side=B][data-method=seem]")
    assert page.errors == []


def test_runs_that_failed_health_are_marked_and_can_be_hidden(page, runs: list[Path]) -> None:
    failed = {_method(r) for r in runs if (h := read_health(r)) is not None and h.status == "fail"}
    assert 0 < len(failed) < 10
    page.open("overview?d=0")
    page.wait_for_selector("#runs tbody tr")
    marked = page.eval_on_selector_all("#runs > tbody > tr.failed", "rows => rows.map(r => r.dataset.method)")
    assert set(marked) == failed and page.locator("#runs > tbody > tr").count() == 10  # shown by default, marked
    page.wait_for_selector("#chart-by_group canvas", timeout=30_000)
    _fits(page)
    _explained(page)
    page.check("#picker input[name=hide-failed]")
    page.wait_for_function("location.hash.includes('hide=failed')")
    page.wait_for_selector("#runs tbody tr")
    assert set(page.eval_on_selector_all("#runs > tbody > tr", "rows => rows.map(r => r.dataset.method)")) == {
        _method(r) for r in RUNS} - failed
    page.open("questions?d=0&hide=failed")
    page.wait_for_selector("#qtable tbody tr")
    assert set(_columns(page)) == {_method(r) for r in RUNS} - failed
    assert page.errors == []
