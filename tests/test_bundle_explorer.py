"""A bundle's explorer: export writes explorer/ from the bundled runs, verify rebuilds it and fails
when the shipped copy is not what the bundled runs give (an edited page, or a run edited after),
and notes, without failing, a bundle made before explorers. Chunks are stored packed and compared
by content; `bundle explorer` rebuilds a shipped bundle's explorer and its manifest entries."""

from __future__ import annotations

import base64
import gzip
import json
import shutil
from pathlib import Path

from explore_site import EPBENCH_RUNS, chunk, site_data

from memeval.cli.bundle import explorer
from memeval.evaluation.explore import site

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


def _with_manifest(bundle: Path, rels: list[str]) -> dict:
    """A manifest as export writes it: the runs, the explorer entry and every file's sha256."""
    from memeval.evaluation.bundle.manifest import FORMAT, file_hashes

    manifest = {"format": FORMAT, "runs": [{"path": r} for r in rels], "explorer": explorer.write(bundle, rels)}
    manifest["files"] = file_hashes(bundle)
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    return manifest


def test_a_chunk_is_compared_by_content_not_by_its_compressed_bytes(tmp_path: Path) -> None:
    bundle, rels = _bundle(tmp_path)
    manifest = _with_manifest(bundle, rels)
    path = bundle / "explorer" / "t" / "0000.js"
    text = path.read_text()
    kind, stem, content = site.read_chunk(text)
    assert (kind, stem) == ("t", "0000") and content["start"] == 0 and content["texts"]
    assert len(text) < len(json.dumps(content, ensure_ascii=False)) / 2  # packing is what keeps bundles small
    # the same content, compressed at another level (as another zlib might): still current
    other = base64.b64encode(gzip.compress(json.dumps(content, ensure_ascii=False, separators=(",", ":"))
                                           .encode(), compresslevel=1, mtime=0)).decode()
    assert other not in text
    path.write_text(f'MEMEVAL_EXPLORER_LOAD("t","0000","{other}");\n')
    log: list[str] = []
    assert explorer.check(bundle, manifest, log.append), log
    # a format-1 chunk (plain JSON) reads back the same; one changed text does not
    content["texts"][0] += " (edited)"
    path.write_text(f'MEMEVAL_EXPLORER_LOAD("t","0000",{json.dumps(content)});\n')
    assert site.read_chunk(path.read_text())[2] == content
    assert not explorer.check(bundle, manifest, log.append) and "t/0000.js" in log[-1]
    assert "memeval bundle explorer" in log[-1]


def test_rebuild_brings_an_old_explorer_current_and_refuses_an_edited_bundle(tmp_path: Path) -> None:
    from memeval.evaluation.bundle.manifest import check_files

    bundle, rels = _bundle(tmp_path)
    _with_manifest(bundle, rels)
    (bundle / "explorer" / "index.html").write_text("<p>an older page</p>")
    (bundle / "explorer" / "q" / "stale-0099.js").write_text("old chunk")
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["files"]["explorer/q/stale-0099.js"] = "0" * 64
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    log: list[str] = []
    assert explorer.rebuild(bundle, log.append) == 0, log
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert check_files(bundle, manifest) == [] and "explorer/q/stale-0099.js" not in manifest["files"]
    assert explorer.check(bundle, manifest, log.append), log
    assert manifest["explorer"]["rebuilt_at_commit"] is not None

    pred = bundle / rels[0] / "predictions.jsonl"
    pred.write_text(pred.read_text() + "\n")
    before = (bundle / "manifest.json").read_text()
    assert explorer.rebuild(bundle, log.append) == 1 and "predictions.jsonl" in log[-1]
    assert (bundle / "manifest.json").read_text() == before
