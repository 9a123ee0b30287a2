"""The offline judge choice as one table, from saved `memeval judge-check --json` files.

    python scripts/judge_choice.py /tmp/jc/*.json [--out docs/JUDGE_CHOICE.md]

One row per (label set, judge, configuration): accuracy and kappa against the hand labels, the
label set's false-accept rate (WRONG answers accepted; EpBench: uncredited gold items credited),
the known-wrong false-accept rate per kind (LoCoMo, where the check ran with --known-wrong) and
seconds per fresh judge call (from the check's own timing; "cached" where every call was a
replay). Reads the files only: no model, no data.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

CONFIGS = ("raw", "grounded", "grounding_only")


def _f(x: Any, digits: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def rows(path: Path) -> list[list[str]]:
    d = json.loads(path.read_text(encoding="utf-8"))
    judge = str(d.get("judge", "?")).split(" (conf")[0]
    label_set = d.get("dataset", "epbench")
    grounding = d.get("grounding_version") or "–"
    timing = d.get("timing") or {}
    per_call = timing.get("seconds_per_fresh_call")
    speed = _f(per_call, 1) if per_call else ("cached" if timing else "–")
    known = (d.get("known_wrong") or {}).get("false_accept", {})
    out = []
    for name in CONFIGS:
        m = d["overall"].get(name)
        if m is None:
            continue
        kw = known.get(name, {})
        kinds = "; ".join(f"{k} {_f(v.get('rate'))} (n {v.get('n')})" for k, v in sorted(kw.items())) or "–"
        out.append([label_set, judge, str(grounding), name, _f(m.get("accuracy")), _f(m.get("kappa")),
                    _f(m.get("false_accept_rate")), kinds, speed if name != "grounding_only" else "0 (no model)"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    head = ["label set", "judge", "grounding version", "configuration", "accuracy", "kappa",
            "false-accept (label set)", "false-accept (known-wrong, by kind)", "s / fresh judge call"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for path in args.files:
        lines += ["| " + " | ".join(r) + " |" for r in rows(path)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
