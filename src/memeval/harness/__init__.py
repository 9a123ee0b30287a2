"""Runs one method on one dataset: index -> answers -> judgments -> metrics -> tables."""
