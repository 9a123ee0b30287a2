"""memeval bundle export RUN_DIR... --name NAME [--out results]
memeval bundle verify results/NAME [--run NAME]... [--fresh]   (resumes an interrupted verify)
memeval bundle import results/NAME [--cache PATH]
memeval bundle explorer results/NAME   (rebuild its explorer with today's page code; 0 calls)

A result bundle is a comparison anyone can re-derive at zero cost: the run folders, every model
call behind them, a manifest of sha256s and the report. Format: docs/RESULT_BUNDLES.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memeval.model_access.cache_store import BACKENDS
from memeval.model_access.local_models import memeval_home


def main(argv: list[str] | None = None, prog: str = "memeval bundle") -> int:
    """The bundle command; `prog` is the name its usage line shows."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("export", help="bundle finished run folders (replays each: 0 new calls allowed)")
    ex.add_argument("runs", nargs="+", type=Path)
    ex.add_argument("--name", required=True)
    ex.add_argument("--out", type=Path, default=Path("results"), help="parent folder (default: results)")
    ex.add_argument("--cache", type=Path, help="the cache holding the runs' calls (default: each run's cache_path)")
    ex.add_argument("--backend", choices=BACKENDS, help="that cache's backend (default: each run's)")
    ex.add_argument("--reference", type=Path, help="paired differences against this run (default: a run of the method whose class is the default reference)")
    ex.add_argument("--data-dir", type=Path, help="benchmark data folder, if not where the runs found it")
    ex.add_argument("--force", action="store_true", help="replace an existing bundle of that name")
    ex.add_argument("--notes", type=Path, help="a Markdown file of build notes (what was measured, what broke and "
                                               "its fix), shipped as NOTES.md and linked from the README; "
                                               "it must give a reason for every failed health check")
    ex.add_argument("--judge-matrix", type=Path, help="a `memeval judge-matrix --out` folder made from these "
                                                      "runs: shipped in judge_matrix/, shown by the report and explorer")
    ex.add_argument("--allow-unexplained-fails", action="store_true",
                    help="export though the notes leave failed checks unexplained (NOTES.md lists them)")
    ve = sub.add_parser("verify", help="replay every run from the bundle's calls alone")
    ve.add_argument("bundle", type=Path)
    ve.add_argument("--data-dir", type=Path, help="benchmark data folder (default: as configured, else ./data)")
    ve.add_argument("--keep", type=Path, help="keep the scratch cache and replayed run folders here")
    ve.add_argument("--run", action="append", metavar="NAME", dest="runs",
                    help="verify only this run (its folder name, dataset/folder, method, or a glob such as "
                         "'graph*'; repeatable)")
    ve.add_argument("--fresh", action="store_true",
                    help="replay every run again, even those an earlier (interrupted) verify of this bundle "
                         "verified OK")
    im = sub.add_parser("import", help="load the bundle's calls into a cache (never overwrites)")
    im.add_argument("bundle", type=Path)
    im.add_argument("--cache", type=Path, default=memeval_home() / "model_calls.sqlite")
    im.add_argument("--backend", choices=BACKENDS)
    rb = sub.add_parser("explorer", help="rebuild a bundle's explorer/ from its runs (0 calls) and update its manifest")
    rb.add_argument("bundle", type=Path)
    args = ap.parse_args(argv)

    if args.cmd == "verify":
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
        return verify(args.bundle, args.data_dir, args.keep, args.runs, args.fresh)
    if args.cmd == "explorer":
        from .explorer import rebuild

        return rebuild(args.bundle)
    if args.cmd == "import":
        from .verify import import_calls

        return import_calls(args.bundle, args.cache, args.backend)
    from .export import BundleError, export_bundle

    if args.notes is not None and not args.notes.is_file():
        print(f"error: --notes {args.notes}: no such file", file=sys.stderr)
        return 2
    try:
        export_bundle(args.runs, args.name, args.out, args.cache, args.backend, args.data_dir,
                      args.reference, args.force, notes=args.notes,
                      allow_unexplained=args.allow_unexplained_fails, judge_matrix=args.judge_matrix)
    except BundleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def verify(bundle: Path, data_dir: Path | None, keep: Path | None, runs: list[str] | None = None,
           fresh: bool = False) -> int:
    from .verify import verify_bundle

    return verify_bundle(bundle, data_dir, keep, runs=runs, fresh=fresh,
                         state_dir=keep or memeval_home() / "verify")

