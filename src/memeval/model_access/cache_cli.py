"""`memeval cache export|import|stats|check`: move cached model calls between
machines, count them, and set aside entries that cannot be read (model_access/cache_check.py).

The bundle is gzip-compressed JSONL, one cached call per line: `{"key", "sha256", "value"}`.
The key is the call's content address (the hash of the request), `sha256` the digest of the
canonical value, checked on import, so a damaged or edited line is refused rather than replayed.
Import never overwrites: a key already cached keeps its value.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .cache import CacheBase
from .cache_store import BACKENDS, open_any, open_cache
from .errors import ConfigError
from .local_models import memeval_home


def value_digest(value: dict[str, Any]) -> str:
    blob = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def export(cache: CacheBase, out: Path, keys: set[str] | None = None,
           exclude: set[str] | frozenset[str] = frozenset()) -> int:
    """Write every cached call (or only `keys`), less the `exclude` keys, to `out`; returns the
    number written."""
    n = 0
    tmp = out.with_name(out.name + ".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as fh:
        for key, value in _selected(cache, keys):
            if key in exclude:
                continue
            fh.write(json.dumps({"key": key, "sha256": value_digest(value), "value": value},
                                ensure_ascii=False) + "\n")
            n += 1
    tmp.replace(out)
    return n


def _selected(cache: CacheBase, keys: set[str] | None) -> Iterable[tuple[str, dict[str, Any]]]:
    if keys is None:
        yield from cache.items()
        return
    for key in sorted(keys):
        value = cache.get(key)
        if value is not None:
            yield key, value


def bundle_keys(bundles: Iterable[Path]) -> set[str]:
    """The keys the given call files hold: calls already shipped, which a pending export skips."""
    keys: set[str] = set()
    for bundle in bundles:
        if not bundle.is_file():
            raise FileNotFoundError(f"--exclude {bundle}: no such call file (a bundle's calls.jsonl.gz)")
        with gzip.open(bundle, "rt", encoding="utf-8") as fh:
            keys.update(json.loads(line)["key"] for line in fh if line.strip())
    return keys


def import_bundle(cache: CacheBase, bundle: Path) -> dict[str, int]:
    """Add the bundle's calls that the cache lacks; refuse lines whose digest does not match."""
    counts = {"added": 0, "already_cached": 0, "rejected": 0}
    with gzip.open(bundle, "rt", encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                ok = value_digest(rec["value"]) == rec["sha256"]
            except (ValueError, KeyError, TypeError):
                ok = False
            if not ok:
                counts["rejected"] += 1
            elif rec["key"] in cache:
                counts["already_cached"] += 1
            else:
                cache.put(rec["key"], rec["value"])
                counts["added"] += 1
    return counts


def stats(cache: CacheBase) -> dict[str, int]:
    out = {"entries": 0, "chat": 0, "embedding": 0, "prompt_tokens": 0, "completion_tokens": 0}
    for _, value in cache.items():
        out["entries"] += 1
        if "v" in value:
            out["embedding"] += 1
        else:
            out["chat"] += 1
            out["prompt_tokens"] += int(value.get("prompt_tokens", 0))
            out["completion_tokens"] += int(value.get("completion_tokens", 0))
    return out


def main(argv: list[str] | None = None) -> int:
    default = memeval_home() / "model_calls.sqlite"
    ap = argparse.ArgumentParser(prog="memeval cache", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("export", help="write cached calls to a .jsonl.gz bundle")
    ex.add_argument("out", type=Path)
    ex.add_argument("--cache", type=Path, default=default, help=f"SQLite file or folder (default {default})")
    ex.add_argument("--keys", type=Path, help="only the keys listed in this file, one per line")
    ex.add_argument("--exclude", type=Path, nargs="+", default=[], metavar="CALLS",
                    help="leave out the calls these files hold (e.g. results/*/calls.jsonl.gz): what "
                         "remains is what an unfinished run paid for, to carry to a fresh machine")
    im = sub.add_parser("import", help="add a bundle's calls to a cache (never overwrites)")
    im.add_argument("bundle", type=Path)
    im.add_argument("--cache", type=Path, default=default)
    im.add_argument("--backend", choices=BACKENDS, help="for a cache that does not exist yet")
    st = sub.add_parser("stats", help="entries and tokens held")
    st.add_argument("--cache", type=Path, default=default)
    ck = sub.add_parser("check", help="find entries that cannot be read and set them aside, keeping the good "
                        "ones (exit 0: all readable, 1: something was set aside); run it while no run uses the cache")
    ck.add_argument("--cache", type=Path, default=default)
    args = ap.parse_args(argv)
    try:
        return _command(args)
    except ConfigError as exc:  # a damaged cache: one line naming the file and `memeval cache check`
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _command(args: argparse.Namespace) -> int:

    if args.cmd == "import":
        backend = args.backend or ("directory" if args.cache.is_dir() else "sqlite")
        cache = open_cache(args.cache, backend)
        if not args.bundle.is_file():
            print(f"error: no bundle at {args.bundle}", file=sys.stderr)
            return 2
        counts = import_bundle(cache, args.bundle)
        print(json.dumps({"cache": str(args.cache), **counts}))
        cache.close()
        return 1 if counts["rejected"] else 0
    if not args.cache.exists():
        print(f"error: no cache at {args.cache} (pass --cache PATH)", file=sys.stderr)
        return 2
    if args.cmd == "check":
        return _check(args.cache)
    cache = open_any(args.cache)
    try:
        if args.cmd == "export":
            keys = set(args.keys.read_text().split()) if args.keys else None
            try:
                excluded = bundle_keys(args.exclude)
            except FileNotFoundError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            n = export(cache, args.out, keys, excluded)
            print(json.dumps({"cache": str(args.cache), "exported": n, "excluded_keys": len(excluded),
                              "bundle": str(args.out)}))
        else:
            print(json.dumps({"cache": str(args.cache), **stats(cache)}))
    finally:
        cache.close()
    return 0


def _check(path: Path) -> int:
    import sqlite3

    from .cache_check import check_cache, summary

    try:
        result = check_cache(path)
    except sqlite3.Error as exc:  # not damage: a locked file, or not a cache at all; nothing was moved
        print(f"error: cannot check {path} ({exc}); nothing was changed: stop the runs using it, or pass "
              "--cache with the cache file", file=sys.stderr)
        return 2
    print(summary(result))
    print(json.dumps(result.as_dict()))
    return 0 if result.clean else 1

