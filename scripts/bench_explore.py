"""How the explorer holds up at 2,000 questions x 10 methods, in headless Chromium.

    python scripts/bench_explore.py [--questions 2000] [--methods 10] [--keep DIR]

Synthetic run folders are made from the LoCoMo bundle's runs (results/locomo-local, read only):
each template question is repeated under new ids until there are --questions, each copy's first
context block made distinct (so the context store grows as with real, different contexts), and
template runs are repeated under new method names until there are --methods. metrics.json is the
template's (the overview's numbers are the 105-question run's; this measures size and speed, not
results). Then the site is built and Chromium (Debian's, via Playwright) times: the overview
(table, then its charts), the question table's first rows, a failure-label filter, a text
search, a sort, and opening a question page (its chunk and context blocks load then).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from memeval.evaluation.explore import build_site
from memeval.evaluation.runs.folder import read_jsonl_file

ROOT = Path(__file__).resolve().parents[1]

TEMPLATES = ROOT / "results" / "locomo-local" / "runs" / "locomo"
PAGE = 100  # rows the table draws at a time (assets/core.js)


def synthetic_runs(root: Path, n_questions: int, n_methods: int) -> list[Path]:
    templates = sorted(p for p in TEMPLATES.iterdir() if (p / "metrics.json").exists())
    runs = []
    for m in range(n_methods):
        src = templates[m % len(templates)]
        copy = m // len(templates)
        meta = json.loads((src / "meta.json").read_text())
        method = meta["method"] + (f"_v{copy + 1}" if copy else "")
        dest = root / "runs" / meta["dataset"] / f"{method}-{m:010d}"
        dest.mkdir(parents=True)
        for name in ("config.yaml", "metrics.json", "usage.json", "index.json"):
            if (src / name).exists():
                shutil.copyfile(src / name, dest / name)
        preds, judgments = read_jsonl_file(src / "predictions.jsonl"), read_jsonl_file(src / "judgments.jsonl")
        by_id = {j["question_id"]: j for j in judgments}
        out_p, out_j = [], []
        for i in range(n_questions):
            p = dict(preds[i % len(preds)])
            qid = f"{p['question_id']}-x{i // len(preds)}"
            text = p["context_text"]
            cut = text.find("\n### ", 1)
            tag = f" (copy {i}, method {m})"
            p.update(question_id=qid, context_text=(text[:cut] + tag + text[cut:]) if cut > 0 else text + tag,
                     answer=p["answer"] + (f" [{copy}]" if copy else ""))
            out_p.append(p)
            out_j.append({**by_id[preds[i % len(preds)]["question_id"]], "question_id": qid})
        (dest / "predictions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in out_p))
        (dest / "judgments.jsonl").write_text("".join(json.dumps(x) + "\n" for x in out_j))
        (dest / "meta.json").write_text(json.dumps({**meta, "method": method, "n_questions": n_questions}))
        runs.append(dest)
    return runs


def _value(page, name: str) -> float:
    """A time the page records (performance.now(), ms since its navigation started)."""
    return page.wait_for_function(f"() => window.{name}", timeout=120_000).json_value()


def measure(site: Path, chromium: str, repeats: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    url = (site / "index.html").as_uri()
    out: dict[str, list[float]] = {}

    def note(what: str, value: float) -> None:
        out.setdefault(what, []).append(value)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        for _ in range(repeats):
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            page.goto(url, wait_until="commit")
            note("overview: table in the page (ms from navigation)", _value(page, "__explorerRendered"))
            note("overview: charts drawn (vega bundle loaded on demand)", _value(page, "__explorerCharts"))
            page.close()
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            page.goto(url + "#/questions?d=0", wait_until="commit")
            note("question table: first rows in the page (ms from navigation)", _value(page, "__explorerRendered"))
            note("rows drawn at first", page.locator("#qtable tbody tr").count())
            for what, action in (
                    ("filter to one failure label", lambda pg=page: pg.select_option("select[name=label]", "retrieval_miss")),
                    ("text search", lambda pg=page: pg.fill("input[name=q]", "dance")),
                    ("sort by a method's score", lambda pg=page: pg.click("#qtable th:nth-child(5)"))):
                page.wait_for_selector("#qtable")
                page.evaluate("window.__explorerDrawn = null")
                action()
                drawn = page.wait_for_function("() => window.__explorerDrawn", timeout=120_000).json_value()
                note(f"{what}: filter, sort, first {PAGE} rows (ms; {drawn['rows']} of {page.inner_text('#count')} match)",
                     drawn["ms"])
            qid = page.get_attribute("#qtable tbody tr", "data-qid")
            page.close()
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            page.goto(url + f"#/q?d=0&id={qid}", wait_until="commit")
            note("question page: fresh load incl. its chunk and context blocks (ms)", _value(page, "__explorerQuestion"))
            note("JS heap on the question page (MB)",
                 page.evaluate("performance.memory ? performance.memory.usedJSHeapSize / 1e6 : -1"))
            page.close()
        browser.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=2000)
    ap.add_argument("--methods", type=int, default=10)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--keep", type=Path, default=None, help="write the runs and the site here (kept)")
    ap.add_argument("--repeats", type=int, default=3, help="page loads per figure (the median is printed)")
    ap.add_argument("--site", type=Path, default=None,
                    help="time an explorer already built (e.g. by `memeval explore`) instead of a synthetic one")
    args = ap.parse_args()
    if args.site is not None:
        files = [f for f in args.site.rglob("*") if f.is_file()]
        print(f"{args.site}: {len(files)} files, {sum(f.stat().st_size for f in files) / 1e6:.2f} MB")
        report(measure(args.site, args.chromium, args.repeats), args.repeats)
        return 0
    with tempfile.TemporaryDirectory(prefix="memeval-bench-explore-") as tmp:
        root = args.keep or Path(tmp)
        t = time.perf_counter()
        runs = synthetic_runs(root, args.questions, args.methods)
        print(f"synthetic runs: {len(runs)} x {args.questions} questions ({time.perf_counter() - t:.1f} s)")
        t = time.perf_counter()
        site = build_site(runs, root / "site")
        print(f"build: {time.perf_counter() - t:.1f} s, {len(site.files)} files, {site.total_bytes / 1e6:.1f} MB")
        parts: dict[str, int] = {}
        for rel, size in site.files.items():
            key = rel.split("/")[0] if "/" in rel else rel
            parts[key] = parts.get(key, 0) + size
        for key, size in sorted(parts.items()):
            print(f"  {key:<12} {size / 1e6:8.2f} MB")
        report(measure(site.out, args.chromium, args.repeats), args.repeats)
    return 0


def report(figures: dict[str, list[float]], repeats: int) -> None:
    print(f"Chromium, headless, file://; median of {repeats} (all values):")
    for what, values in figures.items():
        print(f"  {what}: {statistics.median(values):.0f}  ({', '.join(f'{v:.0f}' for v in values)})")


if __name__ == "__main__":
    sys.exit(main())
