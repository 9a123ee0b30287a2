"""What would repeat-stop have cut from replies already paid for? Replayed offline, no model call.

    memeval audit gsw-repeat-stop results/epbench20-local [RUN ...]

For each run of a result bundle (default: every run whose name starts with gsw), reads the
exported replies of its calls and applies model_access.repeat_stop's cut to each one, the way a
streamed reply would have been cut (the cut is a pure function of the text). Replies are sorted
by shape: Operator JSON (`entities`), space-time JSON (`links`), other JSON, plain text
(situating blurbs, summaries, answers; coreference rewrites are counted apart only when the
bundle cannot tell them apart, so read the text row as an upper bound). Per kind it prints
replies, generated tokens, replies the rule cuts, the share of their tokens after the cut
(o200k proportion of the reply's own token count), and what the cut loses: for JSON, distinct
items after the cut that the whole reply held; for text, cut replies that had ended on their own.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import defaultdict
from pathlib import Path

from memeval.model_access.repeat_stop import RULES, cut_by, cut_repeats, cut_text_repeats
from memeval.model_access.tokenizer import count_tokens


def kind_of(text: str) -> str:
    head = "".join(text.split())[:20]
    if head.startswith('{"entities"'):
        return "operator"
    if head.startswith('{"links"'):
        return "spacetime"
    return "json-other" if head.startswith("{") else "text"


_CEILINGS = {512, 1024, 2048, 4096}  # replies of exactly a max_tokens value: stopped by it (no finish_reason stored)


def _canon(item: object) -> str:
    """An item as the rule compares it: its `id` left out."""
    if isinstance(item, dict):
        item = {k: v for k, v in item.items() if k != "id"}
    return json.dumps(item, sort_keys=True)


def lost_items(whole: str, kept: str) -> int:
    """Distinct top-level items of the whole reply (ids left out) that the cut reply lacks."""
    try:
        full, cut = json.loads(whole), json.loads(kept)
    except ValueError:
        return 0  # the whole reply was invalid (cut by max_tokens): it held nothing usable
    n = 0
    for key, items in full.items():
        if isinstance(items, list):
            have = {_canon(x) for x in cut.get(key, [])}
            n += len({_canon(x) for x in items} - have)
    return n


def replay(values: list[dict], rule: str | None = None) -> dict[str, dict[str, float]]:
    """Per reply kind: what the cut would save; `rule` applies one rule to every reply (as
    `method.stop_repeats` does at the packages' proxy), else GSW's pair (JSON items, text runs)."""
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for v in values:
        text = v.get("text")
        if text is None:
            continue  # an embedding
        kind, ct = kind_of(text), int(v.get("completion_tokens", 0))
        row = rows[kind]
        row["replies"] += 1
        row["tokens"] += ct
        row["max_tokens_cut"] += v.get("finish_reason") == "length"
        if rule is not None:
            cut = cut_by(rule, text)
        else:
            cut = cut_text_repeats(text) if kind == "text" else cut_repeats(text)
        if cut is None:
            continue
        row["cut"] += 1
        row["tokens_saved"] += ct * (1 - count_tokens(text[:cut.at]) / max(1, count_tokens(text)))
        row["cut_at_max_tokens"] += v.get("finish_reason") == "length" or ct in _CEILINGS
        if kind == "text":
            row["cut_after_natural_end"] += v.get("finish_reason") == "stop"
        else:
            row["distinct_items_lost"] += lost_items(text, cut.text)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("runs", nargs="*", help="run names, or name prefixes (default: the bundle's gsw runs)")
    ap.add_argument("--rule", choices=sorted(RULES), help="apply this rule to every reply (the packages' "
                    "method.stop_repeats), instead of GSW's JSON-items and text-runs pair")
    args = ap.parse_args(argv)
    keyfiles = sorted(args.bundle.glob("keys/*/*.txt"))
    wanted = [k for k in keyfiles if (any(k.stem.startswith(r) for r in args.runs) if args.runs
                                      else k.stem.startswith("gsw"))]
    if not wanted:
        raise SystemExit(f"no matching runs in {args.bundle}/keys (have: {[k.stem for k in keyfiles]})")
    values: dict[str, dict] = {}
    with gzip.open(args.bundle / "calls.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            values[rec["key"]] = rec["value"]
    cols = ["replies", "tokens", "max_tokens_cut", "cut", "cut_at_max_tokens", "tokens_saved",
            "distinct_items_lost", "cut_after_natural_end"]
    for keyfile in wanted:
        keys = keyfile.read_text().split()
        rows = replay([values[k] for k in keys if k in values], args.rule)
        print(f"\n{keyfile.parent.name}/{keyfile.stem}: {len(keys)} calls")
        print("| kind | " + " | ".join(cols) + " |")
        print("|---" * (len(cols) + 1) + "|")
        total = defaultdict(float)
        for kind in sorted(rows):
            print(f"| {kind} | " + " | ".join(f"{rows[kind][c]:.0f}" for c in cols) + " |")
            for c in cols:
                total[c] += rows[kind][c]
        print("| all | " + " | ".join(f"{total[c]:.0f}" for c in cols) + " |")
        share = total["tokens_saved"] / max(1, total["tokens"])
        print(f"generated tokens the rule would not have made: {total['tokens_saved']:.0f} of "
              f"{total['tokens']:.0f} ({share:.0%})")
    return 0
