"""Run folders: the one place that writes, reads, locks and scores them (runner and commands alike)."""
