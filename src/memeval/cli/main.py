"""`memeval <command> [args]`: the console script (pyproject [project.scripts]).

The first argument names a command of cli/commands.py; everything after it goes to that
command unchanged (Hydra overrides, -m, --help included), so each command parses its own.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from asyncio import CancelledError
from collections.abc import Iterator

from .commands import COMMANDS


def parser() -> argparse.ArgumentParser:
    """The top-level parser: it lists the commands (--help) and refuses an unknown one."""
    ap = argparse.ArgumentParser(
        prog="memeval", description="Compare LLM memory methods on long narratives and conversations.",
        epilog="`memeval COMMAND --help` shows a command's own arguments.")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for c in COMMANDS.values():
        sub.add_parser(c.name, help=c.help, add_help=False)
    return ap


@contextlib.contextmanager
def _prog(name: str) -> Iterator[None]:
    """argparse names a parser after sys.argv[0]: `memeval compare`, not `memeval`, in usage lines."""
    old = sys.argv[0] if sys.argv else ""
    if not sys.argv:
        sys.argv.append(name)
    sys.argv[0] = name
    try:
        yield
    finally:
        sys.argv[0] = old


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:  # the list of commands, as a usage error
        parser().print_help(sys.stderr)
        return 2
    if args[0] not in COMMANDS:
        parser().parse_args(args[:1])  # --help: the list; an unknown command: exit 2, naming them
        return 2
    command = COMMANDS[args[0]]
    try:
        with _prog(f"memeval {command.name}"):
            return command.main(args[1:])
    except KeyboardInterrupt:
        return interrupted(command.name, command.interrupted)
    except BaseExceptionGroup as group:  # Ctrl-C inside a task group: the same, if nothing else failed
        if group.split((KeyboardInterrupt, CancelledError))[1] is not None:
            raise
        return interrupted(command.name, command.interrupted)


def interrupted(name: str, kept: str) -> int:
    """Ctrl-C in any command: one line saying what is kept and how to go on, no traceback (exit
    130, the shell's code for SIGINT). `run` prints its own, naming the run folder (cli/run.py)."""
    print(f"\ninterrupted: memeval {name} stopped; {kept}.", file=sys.stderr)
    return 130

