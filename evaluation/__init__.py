"""Judging, scoring, bootstrap statistics, tables and comparisons."""
