"""Build the W&B report "F1 by cue bucket, one bar per method" for a project (or one sweep).

    pip install -e '.[dashboard]'            # wandb-workspaces
    wandb sync runs/epbench20/*/wandb/offline-run-*   # upload the offline runs first
    python scripts/wandb_dashboard.py --entity ME --project memeval [--group 2026-11-30_06-37-46]
    python scripts/wandb_dashboard.py --entity ME --dry-run   # print the report spec, no network

Runs are grouped by job_type (= the method), so each bar is one method's mean over its runs, with
the spread as the error bar; the run group is the sweep (its folder name under runs/_multirun).
Uses the documented wandb-workspaces API (wandb_workspaces.reports.v2); saving needs a W&B key.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

BUCKETS = ("0", "1", "2", "3-5", "6+")
STATS = (("f1", "F1"), ("precision", "Precision"), ("recall", "Recall"))


def build(entity: str, project: str, group: str | None = None) -> Any:
    """The report object (nothing is sent until .save())."""
    import wandb_workspaces.reports.v2 as wr
    from wandb_workspaces import expr

    runset = wr.Runset(entity=entity, project=project, name=f"sweep {group}" if group else "all runs",
                       groupby=["JobType"], filters=expr.And(expr.Metric("Group") == group) if group else "")
    panels = [wr.BarPlot(title=f"{label} by cue bucket, one bar per method",
                         metrics=[f"buckets/{b}/{stat}" for b in BUCKETS], orientation="v",
                         groupby_aggfunc="mean", groupby_rangefunc="stddev",
                         title_x="cue bucket", title_y=label)
              for stat, label in STATS]
    panels.append(wr.BarPlot(title="Overall F1 and Simple Recall", metrics=["overall/f1", "simple_recall"],
                             orientation="v", groupby_aggfunc="mean", groupby_rangefunc="stddev"))
    return wr.Report(
        project=project, entity=entity,
        title="memeval: F1 by cue bucket" + (f" ({group})" if group else ""),
        description="EpBench precision / recall / F1 by cue bucket, one bar per method (job_type).",
        blocks=[wr.H1("F1 by cue bucket, one bar per method"),
                wr.P("Bars: mean over the runs of a method; error bars: std across runs. Per-run "
                     "bootstrap std is in each run's summary (buckets/<b>/f1_std)."),
                wr.PanelGrid(runsets=[runset], panels=panels)],
    )


def spec(report: Any) -> dict[str, Any]:
    """The report's fields as JSON (for --dry-run and tests); .save() turns them into the API call."""
    from pydantic import TypeAdapter

    return json.loads(TypeAdapter(type(report)).dump_json(report, exclude_none=True))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entity", required=True, help="W&B entity (user or team)")
    ap.add_argument("--project", default="memeval")
    ap.add_argument("--group", default=None, help="only this sweep (the W&B run group)")
    ap.add_argument("--dry-run", action="store_true", help="print the report spec; send nothing")
    args = ap.parse_args(argv)
    try:
        report = build(args.entity, args.project, args.group)
    except ImportError:
        print("error: needs wandb-workspaces: pip install -e '.[dashboard]'", file=sys.stderr)
        return 2
    if args.dry_run:
        print(json.dumps(spec(report), indent=1))
        return 0
    report.save()
    print(f"saved: {report.url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
