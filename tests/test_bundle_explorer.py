"""A bundle's explorer: export writes explorer/ from the bundled runs, verify rebuilds it and fails
when the shipped copy is not what the bundled runs give (an edited page, or a run edited after),
and notes, without failing, a bundle made before explorers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from explore_site import EPBENCH_RUNS, chunk, site_data

from cli.bundle import explorer

BUNDLE = EPBENCH_RUNS[0].parents[2]


def _bundle(tmp: Path) -> tuple[Path, list[str]]:
    """Two of the EpBench bundle's runs (GSW keeps readable index files) in a bundle layout."""
    dest = tmp / "bundle"
    manifest = json.loads((BUNDLE / "manifest.json").read_text())
    entries = [e for e in manifest["runs"] if e["method"] in ("gsw", "vanilla")]
    for e in entries:
        shutil.copytree(BUNDLE / e["path"], dest / e["path"])
        if e["index_artifacts"]:
            shutil.copytree(BUNDLE / e["index_artifacts"], dest / e["index_artifacts"])
    (dest / "manifest.json").write_text(json.dumps({"runs": entries}))
    return dest, [e["path"] for e in entries]


def test_export_writes_it_and_verify_finds_it_current_then_stale(tmp_path: Path) -> None:
    bundle, rels = _bundle(tmp_path)
    entry = explorer.write(bundle, rels)
    assert entry["index"] == "explorer/index.html" and (bundle / entry["index"]).is_file()
    assert entry["command"].startswith("memeval explore runs/epbench20/")
    manifest = {"runs": [{"path": r} for r in rels], "explorer": entry}
    log: list[str] = []
    assert explorer.check(bundle, manifest, log.append), log
    assert "is current" in log[-1]
    (ds,) = site_data(bundle / "explorer")["datasets"]
    assert [m["path"] for m in ds["methods"]] == rels  # bundle-relative, as the bundle holds them
    gsw = next(i for i, m in enumerate(ds["methods"]) if m["method"] == "gsw")
    links = [u for q in chunk(bundle / "explorer", "q", f"{ds['prefix']}-0000").values()
             for u in (q["methods"][gsw]["index"] or {}).get("units", {}).values()]
    assert links and all(u.startswith("../indexes/") and (bundle / "explorer" / u).resolve().is_file() for u in links)

    run = bundle / rels[0] / "predictions.jsonl"
    lines = run.read_text().splitlines()
    first = json.loads(lines[0])
    run.write_text("\n".join([json.dumps({**first, "answer": first["answer"] + " (edited)"}), *lines[1:]]) + "\n")
    log.clear()
    assert not explorer.check(bundle, manifest, log.append)
    assert log[-1].startswith("FAIL explorer:") and "q/" in log[-1]


def test_an_edited_page_fails_and_an_old_bundle_is_noted(tmp_path: Path) -> None:
    bundle, rels = _bundle(tmp_path)
    entry = explorer.write(bundle, rels)
    (bundle / "explorer" / "index.html").write_text("<p>edited</p>")
    log: list[str] = []
    assert not explorer.check(bundle, {"runs": [{"path": r} for r in rels], "explorer": entry}, log.append)
    assert "index.html" in log[-1]
    log.clear()
    assert explorer.check(bundle, {"runs": [{"path": r} for r in rels]}, log.append)
    assert log == ["note: this bundle ships no explorer (exported before `memeval explore`)"]
