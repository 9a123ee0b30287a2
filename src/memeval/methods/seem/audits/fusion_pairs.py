"""What the stored SEEM runs say about fusion and frames, from the shipped bundles alone (no
model call): every judged pair as the judge saw it, which of them today's veto would have kept
from the judge, which merges contradict their own reason, frames without events and summaries
that copy their passage's opening (what `frame_retry` asks again).

    git worktree add /tmp/v1 99bcce6   # the v1 bundles (0.5B runs), which v2 replaced under results/
    memeval audit seem-fusion --results /tmp/v1/results           # the figures, both bundles
    memeval audit seem-fusion --results /tmp/v1/results --pairs   # + every judged pair, for a reader
    memeval audit seem-fusion --results /tmp/v1/results --fixture tests/fixtures/seem_stored_pairs.json

The frames of each pair are rebuilt as the run built them: each passage's stored frame record,
then every merge's stored rewrite in decision order; the judge request built from them must hash
to a cache key in the bundle's calls.jsonl.gz (else the script stops), so the texts printed are
the texts the judge read. Needs the benchmark data (the passage texts) under ./data.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from typing import Any

from hydra.utils import instantiate
from omegaconf import OmegaConf

from memeval.methods.seem.frames import Frame, copies_opening, frame_from_record, split_passages
from memeval.methods.seem.fusion import union_provenance
from memeval.methods.seem.prompts import judge_messages, merge_messages
from memeval.methods.seem.schemas import FrameOutput, FusionVerdict
from memeval.methods.seem.verdict import CONTRADICTS
from memeval.methods.seem.veto import conflict, dates_in
from memeval.model_access.cache import ResponseCache, cache_key

BUNDLES = {"epbench20-local": "epbench20/seem-a384823753", "locomo-local": "locomo/seem-cbefab33e1"}
TOLERANCES = (0, 3, 7, 14, 31)


def request_key(llm: Any, messages: list[dict[str, str]], schema: type, max_tokens: int) -> str:
    """The cache key the run's client gave this request (model_access.chat.ChatModel)."""
    return cache_key(llm._key_payload(llm._request(messages, max_tokens, llm._response_format(schema))))


def rebuild(bundle: str, results: Path) -> dict[str, Any]:
    """The bundle's judged pairs with the frames as judged, and its per-passage frame records."""
    root = results / bundle
    cfg = OmegaConf.load(root / "runs" / BUNDLES[bundle] / "config.yaml")
    with gzip.open(root / "calls.jsonl.gz", "rt", encoding="utf-8") as fh:
        calls = {r["key"]: r["value"] for r in map(json.loads, fh)}
    llm = instantiate(cfg.llm, _partial_=True)(cache=ResponseCache(None))
    (index,) = (root / "indexes").glob("seem-*")
    (folder,) = [p for p in index.iterdir() if p.is_dir() and p.name != "_passages"]
    corpus = instantiate(cfg.dataset.loader).load().corpora[folder.name]
    passages = split_passages(corpus, cfg.method.window_turns, cfg.method.max_passages)
    order = {p.id: p.order for p in passages}
    records = {p.id: json.loads((index / "_passages" / f"{p.key}.json").read_text()) for p in passages}
    frames = {f"F{i}": frame_from_record(f"F{i}", p.id, records[p.id], p.text) for i, p in enumerate(passages, 1)}
    memory = json.loads((folder / "memory.json").read_text())
    pairs = []
    for d in memory["decisions"]:
        old, new = frames[d["existing"]], frames[d["new"]]
        key = request_key(llm, judge_messages(old.text(), new.text(), 2), FusionVerdict, cfg.method.judge_max_tokens)
        if key not in calls:
            raise SystemExit(f"{bundle}: the judge call of {d['new']} -> {d['existing']} is not in the bundle")
        pairs.append({"bundle": bundle, "new": new.to_json(), "existing": old.to_json(), "key": key,
                      "reply": calls[key]["text"], "level": d["level"], "merged": bool(d["merged"])})
        if d["merged"]:
            m = calls[request_key(llm, merge_messages(old.body(), new.body()), FrameOutput, cfg.method.merge_max_tokens)]
            out = FrameOutput.model_validate_json(m["text"])
            frames[old.id] = Frame(old.id, out.summary, [e.model_dump(mode="json") for e in out.events],
                                   union_provenance(old.provenance, new.provenance, order), [*old.merged_from, new.id])
    written = {p.id: [list(x) for x in dates_in(p.text)] for p in passages}
    model = {k: cfg.llm[k] for k in ("model", "model_revision", "json_mode")} | {
        "judge_max_tokens": cfg.method.judge_max_tokens}
    return {"pairs": pairs, "written": written, "model": model, "passages": passages, "records": records,
            "frames_after": memory["frames"]}


def veto(pair: dict[str, Any], written: dict[str, list], days: int) -> str | None:
    w = {p: [tuple(x) for x in v] for p, v in written.items()}
    return conflict(Frame.from_json(pair["existing"]), Frame.from_json(pair["new"]), days, w)


def figures(bundle: str, b: dict[str, Any]) -> list[str]:
    pairs, written = b["pairs"], b["written"]
    out = [f"## {bundle}", f"judged pairs {len(pairs)}, merged {sum(p['merged'] for p in pairs)}"]
    against = [p for p in pairs if p["merged"] and CONTRADICTS.search(json.loads(p["reply"]).get("reason", ""))]
    out.append(f"merged although the reason says the frames differ: {len(against)} "
               f"({', '.join(_name(p) for p in against) or 'none'})")
    for days in TOLERANCES:
        hit = [(p, why) for p in pairs if (why := veto(p, written, days))]
        out.append(f"veto at {days:>2} days: {len(hit)} of {len(pairs)} pairs never judged "
                   f"({', '.join(f'{_name(p)} {why}' for p, why in hit) or 'none'})")
    recs, passages = b["records"], b["passages"]
    no_events = [p.id for p in passages if not frame_from_record("x", p.id, recs[p.id], p.text).events]
    copied = [p.id for p in passages if copies_opening((recs[p.id]["frame"] or {}).get("summary", ""), p.text)]
    retry = sorted(set(no_events) | set(copied), key=lambda x: [int(t) if t.isdigit() else t for t in x.split("#")])
    after = b["frames_after"]
    out += [f"passages {len(passages)}: frame without events {len(no_events)} ({', '.join(no_events)}); summary "
            f"copying the passage's opening {len(copied)} ({', '.join(copied)}); frame_retry would ask again "
            f"{len(retry)} ({', '.join(retry)})",
            f"frames after fusion {len(after)}, without events {sum(not f['events'] for f in after)}; "
            f"frames per session {len(after) / len({p.unit_id for p in passages}):.2f}"]
    return out


def _name(p: dict[str, Any]) -> str:
    return f"{p['new']['id']}->{p['existing']['id']}"


def pair_lines(b: dict[str, Any]) -> list[str]:
    out = []
    for p in b["pairs"]:
        reply = json.loads(p["reply"])
        out += [f"### {_name(p)}  passages {p['new']['provenance']} -> {p['existing']['provenance']}: "
                f"{reply['level']}{' MERGED' if p['merged'] else ''}; veto (3 days): {veto(p, b['written'], 3)}",
                "A (in memory):", Frame.from_json(p["existing"]).text(), "B (new):", Frame.from_json(p["new"]).text(),
                f"reason: {reply.get('reason', '')}", ""]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", action="store_true", help="print every judged pair as the judge saw it")
    ap.add_argument("--fixture", type=Path, default=None, help="write the pairs as a test fixture")
    ap.add_argument("--results", type=Path, required=True,
                    help="the folder holding the v1 bundles (a checkout of commit 99bcce6's results/)")
    args = ap.parse_args(argv)
    missing = [b for b, run in BUNDLES.items() if not (args.results / b / "runs" / run).is_dir()]
    if missing:
        ap.error(f"{args.results} lacks the v1 runs of {', '.join(missing)}: "
                 "`git worktree add /tmp/v1 99bcce6`, then --results /tmp/v1/results")
    built = {bundle: rebuild(bundle, args.results) for bundle in BUNDLES}
    lines = [line for bundle, b in built.items() for line in figures(bundle, b) + (pair_lines(b) if args.pairs else [])]
    print("\n".join(lines))
    if args.fixture:
        data = {"about": "SEEM's judged fusion pairs in the shipped bundles, frames as the judge read them "
                         "(written by memeval audit seem-fusion --fixture)",
                "bundles": {k: {"model": b["model"], "written": b["written"], "pairs": b["pairs"]}
                            for k, b in built.items()}}
        args.fixture.parent.mkdir(parents=True, exist_ok=True)
        args.fixture.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0
