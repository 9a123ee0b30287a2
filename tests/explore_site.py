"""Reading a built explorer back in tests: data.js and the question chunks are JavaScript calls
around JSON, so the expectations are checked against what the page itself would load."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from conftest import v1_bundle

# the v1 bundles' runs (tests/fixtures/v1_bundles: the 0.5B model's EpBench and LoCoMo runs)
EPBENCH_RUNS = sorted((v1_bundle("epbench20-local") / "runs" / "epbench20").iterdir())
LOCOMO_RUNS = sorted((v1_bundle("locomo-local") / "runs" / "locomo").iterdir())


def site_data(out: Path) -> dict[str, Any]:
    text = (out / "data.js").read_text(encoding="utf-8")
    prefix = "window.MEMEVAL_EXPLORER="
    assert text.startswith(prefix) and text.endswith(";\n")
    return json.loads(text[len(prefix):-2])


def chunk(out: Path, kind: str, stem: str) -> Any:
    """A question or text chunk as the page reads it (packed: gzip + base64 in a string)."""
    text = (out / kind / f"{stem}.js").read_text(encoding="utf-8")
    head = f'MEMEVAL_EXPLORER_LOAD("{kind}","{stem}","'
    assert text.startswith(head) and text.endswith('");\n')
    return json.loads(gzip.decompress(base64.b64decode(text[len(head):-4])))


def saved_labels(run: Path) -> dict[str, str]:
    """question id -> failure label, read straight from the run's files (not through the explorer)."""
    path = run / "diagnostics.jsonl"
    if not path.exists():
        path = run / "judgments.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["question_id"]: r["failure_label"] for r in rows if "failure_label" in r}


def gold_block_question(run: Path) -> tuple[str, str]:
    """A question of `run` whose context has a block headed by one of its gold units (Vanilla sends
    every chapter): (question id, that unit)."""
    for line in (run / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
        p = json.loads(line)
        for u in p.get("gold_units") or []:
            if f"### Chapter {u}\n" in p["context_text"] or f"### Session {u} (" in p["context_text"]:
                return p["question_id"], str(u)
    raise AssertionError(f"no question of {run} has a gold unit block")


def chromium_path() -> str:
    """The system Chromium the browser tests drive (MEMEVAL_CHROMIUM, else `chromium` on PATH)."""
    import os
    import shutil

    return os.environ.get("MEMEVAL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@contextmanager
def chromium_page(width: int = 1400) -> Iterator[Any]:
    """A headless Chromium page at `width` px that keeps the page's errors (console and uncaught) in
    `page.errors`; the caller's module has already skipped where Chromium or playwright is missing."""
    from playwright import sync_api

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": width, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.errors = errors
        yield page
        browser.close()
