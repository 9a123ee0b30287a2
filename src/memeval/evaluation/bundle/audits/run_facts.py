"""What a bundle's build notes report per run, read from the run folders alone (no model call).

    memeval audit run-facts runs/locomo/seem-* runs/locomo/gsw-* ...

Prints one markdown row per run: index seconds and model calls of this run (fresh / replayed
from the cache), what building the index took (the index folder's usage record), answer- and
judge-stage calls, mean context tokens, empty and truncated contexts, judge failures, contexts
the cap audit flags (13+ verbatim words of units beyond those counted against the cap), and the
method's own failure counters (every index statistic whose name ends in `_failed`). With
--section, the whole block `memeval bundle export` writes into NOTES.md
(evaluation/bundle/facts.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memeval.evaluation.bundle.facts import facts as _facts
from memeval.evaluation.bundle.facts import section, table


def facts(run: Path) -> dict[str, Any]:
    """The figures of one finished run folder (evaluation.bundle.facts.facts)."""
    return _facts(run)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--section", action="store_true", help="print NOTES.md's generated block instead")
    args = ap.parse_args(argv)
    print(section(args.runs) if args.section else "\n".join(table([facts(r) for r in args.runs])))
    return 0
