"""Judging, scoring, statistics, run folders, the report and the evaluation commands.

Layout and the one-way import layering: ARCHITECTURE.md ("Packages", "Layering").
"""
