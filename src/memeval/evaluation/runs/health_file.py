"""RUN_DIR/health.json, as every reader sees it (tables, paired differences, explorer).

The checks themselves live in evaluation/health/ (and the methods' own index counters); this
module only reads and writes the file and the thresholds (conf/health/default.yaml), so a table
never needs to know how a check works, and the upgrade module can give a saved config today's
thresholds for checks added after it.
Format 1: {"format": 1, "checks": [{"name", "scope", "status", "value", "threshold", "message"}]}.
Format 2 lets a check name the questions it found something in: `"questions": {question id: what
it found there}` (left out when empty), which the explorer shows on each question's page.
Format 3 (issue 56): a check with nothing to measure has status "not_measured" (shown "not
measured"), never "ok"; `judge_kappa` is the LLM judge's raw verdicts against the model-free
rater on every dataset (format 2's EpBench one was the grounded credit's, which is partly built
from that rater); `gold_strings` is the share of gold answer strings in the contexts (format 2:
that share divided by gold-unit recall). A format 1-2 file is read as format 3 means it
(`_upgrade`): its unmeasured checks (value null, "ok"; a kappa on too few items, "reported, not
judged") read as not measured, and the two checks
whose meaning changed read as not measured, their old reading kept in the message, until
`memeval health RUN_DIR` (model-free) measures them again.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from memeval.paths import CONF

HEALTH_FORMAT = 3
DEFAULT_THRESHOLDS = CONF / "health" / "default.yaml"
NOT_CHECKED = "not checked"  # a run with no health.json (`memeval health RUN_DIR` writes one)
SCOPES = ("index", "context", "answer", "judge")
NOT_MEASURED = "not_measured"  # nothing to measure: neither ok nor failed (format 3)
STATUSES = ("ok", "warn", "fail", NOT_MEASURED)
# format 1-2 checks whose value meant something else then (see the module docstring)
_REDEFINED = {"gold_strings": "a ratio of the gold strings' share to gold-unit recall",
              "judge_kappa": "the grounded credit against the matcher, not the judge"}


def shown(status: str) -> str:
    """A status as a table prints it ("not measured", not the file's identifier)."""
    return status.replace("_", " ")


@dataclass(frozen=True)
class Check:
    name: str
    scope: str  # one of SCOPES
    status: str  # one of STATUSES
    value: Any
    threshold: Any
    message: str
    questions: dict[str, str] = field(default_factory=dict, compare=False)  # question id -> what was found

    def __post_init__(self) -> None:
        if self.scope not in SCOPES or self.status not in STATUSES:
            raise ValueError(f"health check {self.name!r}: scope must be one of {SCOPES} and status one "
                             f"of {STATUSES}, not {self.scope!r} / {self.status!r}")


@dataclass
class Health:
    checks: list[Check] = field(default_factory=list)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == "fail"]

    @property
    def warnings(self) -> list[Check]:
        return [c for c in self.checks if c.status == "warn"]

    @property
    def status(self) -> str:
        """fail if any check failed, else warn if any warned, else ok."""
        return "fail" if self.failed else "warn" if self.warnings else "ok"

    def mark(self) -> str:
        """What a table's health column shows: the status, the first failing (or warning) message,
        and the names of the other checks at that status (a reader of one cell sees every fail)."""
        worst = self.failed or self.warnings
        if not worst:
            return self.status
        more = f" (and {len(worst) - 1} more: {', '.join(c.name for c in worst[1:])})" if len(worst) > 1 else ""
        return f"{self.status}: {worst[0].message}{more}"

    def to_dict(self) -> dict[str, Any]:
        return {"format": HEALTH_FORMAT, "checks": [{k: v for k, v in asdict(c).items() if k != "questions" or v}
                                                     for c in self.checks]}


def mark_of(health: Health | None) -> str:
    """What a table's health cell shows for a run: its health's mark, or "not checked"."""
    return NOT_CHECKED if health is None else health.mark()


def read_health(run: Path) -> Health | None:
    """The run's health.json (None when the run was never checked: `memeval health RUN_DIR`)."""
    path = Path(run) / "health.json"
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if int(data.get("format", 0)) > HEALTH_FORMAT:
        raise ValueError(f"{path}: health format {data['format']} is newer than this code's {HEALTH_FORMAT}")
    fmt = int(data.get("format", 0))
    return Health([_upgrade(Check(**c), fmt) for c in data.get("checks", [])])


def _upgrade(c: Check, fmt: int) -> Check:
    """A check of a format 1-2 file as format 3 means it: "ok" with no value was a check with
    nothing to measure, and a check whose meaning changed is not measured in today's sense (its
    old reading stays in the message; `memeval health RUN_DIR` measures it again, model-free)."""
    if fmt >= 3:
        return c
    if c.status == "ok" and (c.value is None or "reported, not judged" in c.message):  # judge_kappa on too few items
        return replace(c, status=NOT_MEASURED, value=None)
    redefined = c.name == "gold_strings" or (c.name == "judge_kappa" and "(grounded credit)" in c.message)
    if redefined and c.value is not None:
        return replace(c, status=NOT_MEASURED, value=None,
                       message=f"health format {fmt} measured {_REDEFINED[c.name]} ({c.status} {c.value}: "
                               f"{c.message}); `memeval health RUN_DIR` measures it as it is meant now")
    return c


def load_thresholds(path: Path | None = None) -> dict[str, Any]:
    """The thresholds as a plain dict, from conf/health/default.yaml (or `path`) without Hydra."""
    data = OmegaConf.to_container(OmegaConf.load(path or DEFAULT_THRESHOLDS), resolve=True)
    assert isinstance(data, dict)
    return data.get("health", data)  # a file may hold the group under its package name
