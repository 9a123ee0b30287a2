"""How many tokens does GSW's compact wire format save? Offline, on replies already paid for.

    python scripts/bench_gsw_format.py [BUNDLE] [--runs RUN ...]

Reads the exported replies of a result bundle's GSW runs (every run whose name starts with gsw;
the JSON-format ones are v1's: `git worktree add /tmp/v1 99bcce6`, then pass
/tmp/v1/results/epbench20-local), keeps the Operator and space-time replies that parse under the
old format (JSON, read as the client reads it), re-encodes each in the compact line layout
(methods/gsw/wire.py, no model call), checks that it decodes to the same data, and counts both
texts in o200k (model_access.tokenizer). Per kind: replies, parsed, round-trip failures, tokens
as JSON and as lines, and the ratio. Entity summaries and the other prose replies are plain text
in both formats and are not re-encoded. A note says how many replies a rule cutting at a
repeated single line would have cut (the line_blocks rule compares whole blocks).
The last line: `Operator reply tokens compact/json: R`.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import defaultdict
from pathlib import Path

from memeval.methods.gsw import wire
from memeval.methods.gsw.schemas import OperatorOutput, SpaceTimeOutput
from memeval.model_access.chat import _strip_fences
from memeval.model_access.repeat_stop import cut_whole
from memeval.model_access.tokenizer import count_tokens

ROOT = Path(__file__).resolve().parents[1]

KINDS = {"operator": (OperatorOutput, wire.encode_operator, wire.decode_operator),
         "spacetime": (SpaceTimeOutput, wire.encode_spacetime, wire.decode_spacetime)}


def kind_of(text: str) -> str | None:
    head = "".join(text.split())[:14]
    if head.startswith('{"entities":[{'):
        return "operator"
    if head.startswith('{"links":'):
        return "spacetime"
    return None


def replies(bundle: Path, runs: list[str]) -> list[dict]:
    """The bundle's chat replies behind the chosen runs (each call once)."""
    keyfiles = sorted(bundle.glob("keys/*/*.txt"))
    wanted = [k for k in keyfiles if (k.stem in runs if runs else k.stem.startswith("gsw"))]
    if not wanted:
        raise SystemExit(f"no matching runs in {bundle}/keys (have: {[k.stem for k in keyfiles]})")
    keys = {key for k in wanted for key in k.read_text().split()}
    out = []
    with gzip.open(bundle / "calls.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if rec["key"] in keys and "text" in rec["value"]:
                out.append(rec["value"])
    return out


def single_line_cuts(text: str) -> bool:
    """Would ending the reply at its first repeated line (ignoring ids) have cut it?"""
    seen: set[str] = set()
    for line in text.splitlines():
        canon = wire._ID.sub("", line.strip(), count=1) if line and not line[0].isspace() else line.strip()
        if canon in seen:
            return True
        seen.add(canon)
    return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path, help="a result bundle, e.g. v1's epbench20-local (above)")
    ap.add_argument("--runs", nargs="*", default=[], help="run names (default: the bundle's gsw runs)")
    args = ap.parse_args()
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for value in replies(args.bundle, args.runs):
        kind = kind_of(value["text"])
        if kind is None:
            continue
        model, encode, decode = KINDS[kind]
        row = rows[kind]
        row["replies"] += 1
        try:
            out = model.model_validate_json(_strip_fences(value["text"]))
        except ValueError:
            continue  # invalid under the old format too (cut by max_tokens): nothing to re-encode
        lines = encode(out)
        row["parsed"] += 1
        row["round_trip_failures"] += decode(lines) != out
        row["json_tokens"] += count_tokens(value["text"])
        row["compact_tokens"] += count_tokens(lines)
        row["single_line_rule_cuts"] += single_line_cuts(lines)
        row["line_blocks_cuts"] += cut_whole("line_blocks", lines) != lines
    cols = ["replies", "parsed", "round_trip_failures", "json_tokens", "compact_tokens"]
    print(f"{args.bundle.name}: stored GSW replies re-encoded in {wire.WIRE_VERSION} (o200k tokens)")
    print("| kind | " + " | ".join(cols) + " | compact/json |")
    print("|---" * (len(cols) + 2) + "|")
    for kind in KINDS:
        r = rows[kind]
        ratio = r["compact_tokens"] / max(1.0, r["json_tokens"])
        print(f"| {kind} | " + " | ".join(f"{r[c]:.0f}" for c in cols) + f" | {ratio:.3f} |")
    print("| summary | prose in both formats: not re-encoded | | | | | 1.000 |")
    op = rows["operator"]
    print(f"note: a rule ending an Operator reply at its first repeated single line would cut "
          f"{op['single_line_rule_cuts']:.0f} of {op['parsed']:.0f} re-encoded replies (shared role or "
          f"question lines); line_blocks cuts {op['line_blocks_cuts']:.0f}")
    if any(rows[k]["round_trip_failures"] for k in KINDS):
        raise SystemExit("round-trip failures: the compact format lost data (see the table)")
    print(f"Operator reply tokens compact/json: {op['compact_tokens'] / max(1.0, op['json_tokens']):.3f}")


if __name__ == "__main__":
    main()
