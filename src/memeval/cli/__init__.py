"""The command line, above the harness: one console script, `memeval <command>` (cli/main.py).

Each command is a thin module calling the implementation where it lives (evaluation/, harness/,
model_access/); commands that build or replay runs through the harness (run, bundle,
judge-check) live here, so nothing below imports upward. The commands are listed in one table,
cli/commands.py.
"""
