"""Write the explorer: index.html (the page: assets/*.js and app.css inlined), data.js (overview and
question table), q/*.js (question pages, loaded when one is opened), t/*.js (context blocks, each
stored once) and vendor/vega-bundle.js (Vega, Vega-Lite and vega-embed, from vl-convert).

The q/ and t/ chunks are most of a bundle's explorer and are repetitive text (contexts, answers),
so each is stored gzip-compressed and base64-encoded (about a sixth of its JSON size); the page
decodes it with the browser's DecompressionStream. Format 1 stored them as plain JSON.

Every file is a classic script, so the site works from file:// (a browser refuses fetch() and
module imports there) and from any static host. Nothing in the output depends on the time or the
machine: two builds of the same runs are identical byte for byte (`bundle verify` relies on it).
"""

from __future__ import annotations

import base64
import gzip
import json
import shutil
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..runs.scored import ReportError, Run, load_runs
from .overview import overview
from .questions import (
    FLAGS,
    LABEL_ORDER,
    TextStore,
    gold_text,
    method_views,
    question_attributes,
    question_record,
)
from .readers import health_view, index_links

SITE_FORMAT = 2
CHUNK_QUESTIONS = 40
TEXT_FILE_BYTES = 1_000_000
GENERATED = ("index.html", "data.js", "q", "t", "vendor")
PACKED = ("q", "t")  # folders whose chunks are stored gzip + base64
LOAD = "MEMEVAL_EXPLORER_LOAD"
SCRIPTS = ("core.js", "methods.js", "overview.js", "table.js", "question.js")  # the page's code, inlined in order


class ExploreError(ValueError):
    """An explorer that cannot be built as asked (no runs, a folder that is not a scored run)."""


@dataclass
class Site:
    out: Path
    files: dict[str, int] = field(default_factory=dict)  # relative path -> bytes
    datasets: dict[str, dict[str, int]] = field(default_factory=dict)  # name -> runs, questions

    @property
    def total_bytes(self) -> int:
        return sum(self.files.values())


@cache
def vega_bundle() -> str:
    """Vega + Vega-Lite + vega-embed as one classic script (window.vegaEmbed), from vl-convert."""
    import altair as alt
    import vl_convert as vlc

    vl = ".".join(alt.SCHEMA_VERSION.split(".")[:2])  # the Vega-Lite altair writes its specs for
    head = (f"/* vega {vlc.get_vega_version()}, vega-lite {vl}, vega-embed {vlc.get_vega_embed_version()} "
            "(BSD-3-Clause, the Vega project), bundled by vl-convert-python */\n")
    # the stub makes `snippet` required, the function does not (its default snippet sets window.vegaEmbed)
    return head + vlc.javascript_bundle(vl_version=vl)  # type: ignore[call-arg]


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _js(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _dataset(name: str, runs: list[Run], links_from: Path, judge_matrix: Path | None, store: TextStore,
             prefix: str, chunk: int) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The dataset's entry in data.js and its question-page chunks (file stem -> content)."""
    p = runs[0].presentation
    health = {r.label: health_view(r) for r in runs}
    views = []
    has_index = {}
    for r in runs:
        corpora = sorted({str(x.get("corpus_id")) for x in r.predictions})
        links = index_links(r, corpora, links_from)
        has_index[r.label] = bool(links)
        views.append(method_views(r, health[r.label], links, store))
    attrs = question_attributes(runs, [a for a in (p.group_field, runs[0].meta.get("strata_key")) if a])
    order = list(dict.fromkeys(q["question_id"] for r in runs for q in r.predictions))
    preds = [{x["question_id"]: x for x in r.predictions} for r in runs]
    rows: list[list[Any]] = []
    chunks: dict[str, dict[str, Any]] = {}
    for i, qid in enumerate(order):
        q = question_record(qid, [pr.get(qid) for pr in preds], attrs)
        cells = [v[qid][0] if qid in v else None for v in views]
        rows.append([qid, q["attrs"], q["question"], gold_text(q["gold"]), cells])
        stem = f"{prefix}-{i // chunk:04d}"
        chunks.setdefault(stem, {})[qid] = {**q, "methods": [v[qid][1] if qid in v else None for v in views]}
    labels = {r.label: [LABEL_ORDER[v[q][0][1]] for q in v] for r, v in zip(runs, views, strict=True)}
    data = overview(name, runs, labels, health, has_index, judge_matrix)
    data.update(attrs=attrs, rows=rows, chunk=chunk, prefix=prefix)
    return data, chunks


def build_site(run_dirs: list[Path], out: Path, judge_matrix: Path | None = None, title: str | None = None,
               links_from: Path | None = None, chunk: int = CHUNK_QUESTIONS) -> Site:
    """Write the explorer of `run_dirs` into `out` (its earlier files replaced); returns what was
    written. `links_from`: where the site will live, if not at `out` (links into index folders
    are relative to it; `bundle verify` builds a copy elsewhere to compare)."""
    if not run_dirs:
        raise ExploreError("no run folders given")
    try:
        runs = load_runs([Path(p) for p in run_dirs])
    except ReportError as exc:
        raise ExploreError(str(exc)) from exc
    by_dataset: dict[str, list[Run]] = {}
    for r in runs:
        by_dataset.setdefault(r.dataset, []).append(r)
    store = TextStore()
    datasets, chunks = [], {}
    for i, (name, group) in enumerate(by_dataset.items()):
        data, parts = _dataset(name, group, links_from or out, judge_matrix, store, f"d{i}", chunk)
        datasets.append(data)
        chunks.update(parts)
    text_files = _text_files(store.texts)
    site_title = title or "memeval explorer: " + ", ".join(by_dataset)
    payload = {"format": SITE_FORMAT, "title": site_title, "datasets": datasets, "labels": list(LABEL_ORDER),
               "flags": FLAGS, "text_files": [start for start, _ in text_files]}
    files = {"data.js": f"window.MEMEVAL_EXPLORER={_js(payload)};\n",
             "vendor/vega-bundle.js": vega_bundle(),
             "index.html": _asset("index.html").replace("{{TITLE}}", _escape(site_title))
                                               .replace("/*{{CSS}}*/", _asset("app.css"))
                                               .replace("/*{{JS}}*/", "\n".join(_asset(f) for f in SCRIPTS))}
    for stem, content in chunks.items():
        files[f"q/{stem}.js"] = packed_chunk("q", stem, content)
    for n, (start, texts) in enumerate(text_files):
        files[f"t/{n:04d}.js"] = packed_chunk("t", f"{n:04d}", {"start": start, "texts": texts})
    site = Site(out)
    _write(out, files, site)
    site.datasets = {name: {"runs": len(group), "questions": len(d["rows"])}
                     for (name, group), d in zip(by_dataset.items(), datasets, strict=True)}
    return site


def packed_chunk(kind: str, stem: str, content: Any) -> str:
    """A chunk file: the loader called with the content's JSON, gzip-compressed (no timestamp, so
    two builds agree) and base64-encoded into a string."""
    packed = base64.b64encode(gzip.compress(_js(content).encode("utf-8"), compresslevel=9, mtime=0))
    return f'{LOAD}("{kind}","{stem}","{packed.decode("ascii")}");\n'


def read_chunk(text: str) -> tuple[str, str, Any]:
    """(kind, stem, content) of a chunk file, packed (format 2) or plain JSON (format 1)."""
    head, sep, rest = text.partition(",")
    kind = head.removeprefix(f'{LOAD}("').removesuffix('"')
    stem, _, payload = rest.partition(",")
    if not (sep and head.startswith(f"{LOAD}(") and payload.endswith(");\n")):
        raise ExploreError(f"not an explorer chunk: {text[:80]!r}")
    payload = payload[:-3]
    if payload.startswith('"'):
        payload = gzip.decompress(base64.b64decode(json.loads(payload))).decode("utf-8")
    return kind, json.loads(stem), json.loads(payload)


def _text_files(texts: list[str]) -> list[tuple[int, list[str]]]:
    """Consecutive blocks in files of about TEXT_FILE_BYTES: (first block id, texts)."""
    out: list[tuple[int, list[str]]] = []
    size = TEXT_FILE_BYTES
    for i, t in enumerate(texts):
        if size >= TEXT_FILE_BYTES:
            out.append((i, []))
            size = 0
        out[-1][1].append(t)
        size += len(t.encode("utf-8"))
    return out


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _write(out: Path, files: dict[str, str], site: Site) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in GENERATED:  # an earlier build's chunks must not linger beside this one's
        target = out / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    for rel, text in sorted(files.items()):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(data)
        site.files[rel] = len(data)


def generated_files(out: Path) -> dict[str, bytes]:
    """The explorer files under `out` (what `bundle verify` compares with a fresh build). A packed
    chunk is compared by its content, not its compressed bytes, which another zlib may write
    differently; the manifest's sha256s still pin the shipped bytes."""
    found = {}
    for name in GENERATED:
        target = out / name
        paths = sorted(target.rglob("*")) if target.is_dir() else [target] if target.is_file() else []
        for p in paths:
            if p.is_file():
                rel = p.relative_to(out).as_posix()
                data = p.read_bytes()
                if rel.split("/")[0] in PACKED:
                    data = _js(read_chunk(data.decode("utf-8"))).encode("utf-8")
                found[rel] = data
    return found
