"""Baselines run as their official packages, each in its own managed environment (see base.py)."""
