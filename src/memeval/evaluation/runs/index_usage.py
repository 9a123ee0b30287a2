"""What building an index took (model calls and tokens), recorded in the index folder itself.

A run that reuses a stored index makes no index call, so its usage.json says 0 for the index
stage although the index cost hundreds of calls. The index stage therefore appends each
session's index calls to INDEX_FOLDER/index_usage.json (one entry per corpus and session, fresh
and cached calls alike, since a cached call was paid once by whoever made it), and every reader
takes, per corpus, the session with the most calls: a complete build, whether made now, earlier,
or replayed from the cache by a bundle's export. A session that only loaded the stored index
(a few embedding calls) never hides the build. An index built over several interrupted
sessions shows its largest session (an undercount, said in `sessions`).

Format 1: {"format": 1, "corpora": {corpus_id: [{"at", "calls", "fresh_calls", "prompt_tokens",
"completion_tokens", "by_model": {model: {"calls", "prompt_tokens", "completion_tokens"}}}]}}.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .folder import RunFolder, _atomic_write, json_text

RECORD = "index_usage.json"
FORMAT = 1


@dataclass
class IndexUsage:
    """The index's calls and tokens, and where the figures come from."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    by_model: dict[str, dict[str, int]] = field(default_factory=dict)
    source: str = "none"  # "index record" | "this run" (no record: the run's own index-stage calls)
    sessions: int = 0  # sessions recorded in the index folder (0: no record)
    folder_exists: bool = False

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def recorded(self) -> bool:
        return self.source == "index record"

    @property
    def unrecorded(self) -> bool:
        """The run has an index whose build is not recorded (its figures are this run's calls
        alone); a method that builds nothing (Vanilla: no index call, no folder) is not a gap."""
        return not self.recorded and (self.calls > 0 or self.folder_exists)


def session_entry(calls: list[dict[str, Any]], at: str) -> dict[str, Any]:
    """One session's index calls (as model_access.usage.collect_calls gives them) as a record entry."""
    by_model: dict[str, dict[str, int]] = {}
    for c in calls:
        m = by_model.setdefault(str(c["model"]), {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        m["calls"] += 1
        m["prompt_tokens"] += int(c["prompt_tokens"])
        m["completion_tokens"] += int(c["completion_tokens"])
    return {"at": at, "calls": len(calls), "fresh_calls": sum(1 for c in calls if not c["cached"]),
            "prompt_tokens": sum(m["prompt_tokens"] for m in by_model.values()),
            "completion_tokens": sum(m["completion_tokens"] for m in by_model.values()),
            "by_model": dict(sorted(by_model.items()))}


def record_session(store_root: Path, corpus_id: str, calls: list[dict[str, Any]], at: str) -> None:
    """Append this session's index calls for `corpus_id` to the index folder's record (the
    caller holds the index folder's lock). A session with no call, or one whose figures equal a
    recorded session's (a reuse that loaded the same files), adds nothing."""
    if not calls:
        return
    path = Path(store_root) / RECORD
    data = _read(path) or {"format": FORMAT, "corpora": {}}
    entry = session_entry(calls, at)
    same = [{k: v for k, v in e.items() if k != "at"} for e in data["corpora"].get(corpus_id, [])]
    if {k: v for k, v in entry.items() if k != "at"} in same:
        return
    data["corpora"].setdefault(corpus_id, []).append(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, json_text(data))


def _read(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if int(data.get("format", 0)) > FORMAT:
        raise ValueError(f"{path}: index usage format {data['format']} is newer than this code's {FORMAT}")
    return data


def index_folder(run: Path) -> Path | None:
    """The run's index folder as index.json names it: as written (absolute, or relative to the
    folder the run was started from, two levels above runs/<dataset>/), else a result bundle's
    copy (BUNDLE/indexes/<name>); None when neither exists."""
    run = Path(run)
    if not (run / "index.json").exists():
        return None
    named = json.loads((run / "index.json").read_text(encoding="utf-8")).get("index_folder")
    if not named:
        return None
    base = run.resolve().parents[2] if len(run.resolve().parents) > 2 else run.resolve().parent
    for candidate in (Path(named), base / named, base / "indexes" / Path(named).name):
        if candidate.is_absolute() and candidate.is_dir():
            return candidate
    return None


def read_index_usage(run: Path) -> IndexUsage:
    """The index's usage for this run: the index folder's record (per corpus the largest
    session), else the run's own index-stage calls from usage.json (0 where it reused an index)."""
    run = Path(run)
    folder = index_folder(run)
    data = _read(folder / RECORD) if folder is not None else None
    corpora = _run_corpora(run)
    if data and any(data["corpora"].get(c) for c in corpora):
        out = IndexUsage(source="index record")
        for cid in corpora:
            sessions = data["corpora"].get(cid) or []
            if not sessions:
                continue
            best = max(sessions, key=lambda e: (e["calls"], e["prompt_tokens"] + e["completion_tokens"]))
            out.sessions += len(sessions)
            for model, m in best.get("by_model", {}).items():
                _add(out, model, int(m["calls"]), int(m["prompt_tokens"]), int(m["completion_tokens"]))
        return out
    out = _this_run(run)
    out.folder_exists = folder is not None and any(folder.iterdir())
    return out


def record_of_run(run: Path) -> str | None:
    """The run's index folder's record, limited to the run's corpora, as its file's text (None
    without a record). An index folder is shared by every run with the same index parameters,
    across datasets (SEEM's LongMemEval and LoCoMo runs), so a bundle ships the run's corpora only."""
    folder = index_folder(Path(run))
    data = _read(folder / RECORD) if folder is not None else None
    if data is None:
        return None
    corpora = set(_run_corpora(Path(run)))
    return json_text({**data, "corpora": {c: s for c, s in data["corpora"].items() if c in corpora}})


def _run_corpora(run: Path) -> list[str]:
    if not (run / "index.json").exists():
        return []
    index = json.loads((run / "index.json").read_text(encoding="utf-8"))
    return [str(c["corpus_id"]) for c in index.get("corpora") or [] if "corpus_id" in c]


def _this_run(run: Path) -> IndexUsage:
    """The run's own index-stage calls: of its usage.jsonl invocations (every session the run
    folder saw) the one with the most, else usage.json's (its last invocation)."""
    sessions: dict[str, IndexUsage] = {}
    for row in RunFolder(run).read_jsonl("usage.jsonl"):
        if row.get("stage") != "index" or "model" not in row:
            continue
        u = sessions.setdefault(str(row.get("inv")), IndexUsage(source="this run"))
        _add(u, str(row["model"]), 1, int(row.get("prompt_tokens", 0)), int(row.get("completion_tokens", 0)))
    last = IndexUsage(source="this run")
    if (run / "usage.json").exists():
        st = (RunFolder(run).read_json("usage.json").get("stages") or {}).get("index") or {}
        by_model = st.get("by_model") or {"?": {k: st[k] for k in ("fresh", "cached") if k in st}}
        for model, kinds in by_model.items():
            for b in kinds.values():
                _add(last, model, int(b.get("calls", 0)), int(b.get("prompt_tokens", 0)),
                     int(b.get("completion_tokens", 0)))
    return max([last, *sessions.values()], key=lambda u: (u.calls, u.tokens))


def _add(u: IndexUsage, model: str, calls: int, prompt: int, completion: int) -> None:
    acc = u.by_model.setdefault(model, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
    acc["calls"] += calls
    acc["prompt_tokens"] += prompt
    acc["completion_tokens"] += completion
    u.calls += calls
    u.prompt_tokens += prompt
    u.completion_tokens += completion
