"""`memeval audit NAME [args]`: the one-off measurements that read saved runs, indexes or bundles.

An audit lives beside what it audits (a method's `audits/` package, the health package, ...) and
registers under the `memeval.audits` entry point group, `NAME = "module:main"`, exactly as a
plugin's would, so this command names none of them and a third party's audit is listed the
same way. `main(argv)` parses its own arguments; `memeval audit` alone lists every audit.
Nothing is imported until an audit runs (or the list asks each for its first docstring line).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from importlib.metadata import entry_points

GROUP = "memeval.audits"


def registered() -> dict[str, str]:
    """name -> "module:function" for every installed distribution's audits."""
    return dict(sorted((ep.name, ep.value) for ep in entry_points(group=GROUP)))


def load(value: str) -> Callable[..., int | None]:
    module, _, attr = value.partition(":")
    return getattr(importlib.import_module(module), attr or "main")


def _summary(value: str) -> str:
    doc = importlib.import_module(value.partition(":")[0]).__doc__ or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def listing(audits: dict[str, str]) -> str:
    width = max((len(n) for n in audits), default=0)
    lines = [f"  {name:<{width}}  {_summary(value)}" for name, value in audits.items()]
    return "\n".join(["usage: memeval audit NAME [args]   (`memeval audit NAME --help`: its own arguments)",
                      "", "audits:", *lines])


def main(argv: list[str]) -> int:
    audits = registered()
    if not argv or argv[0] in ("-h", "--help"):
        print(listing(audits), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in audits:
        print(f"memeval audit: no audit {name!r}; audits: {', '.join(audits) or 'none installed'}", file=sys.stderr)
        return 2
    old = sys.argv[0] if sys.argv else ""
    sys.argv[:1] = [f"memeval audit {name}"]  # argparse's usage line names the command
    try:
        code = load(audits[name])(rest)
    finally:
        sys.argv[0] = old
    return int(code or 0)
