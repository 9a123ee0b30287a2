"""What two sweeps' run folders must share: every artifact but the fields that name a time or a machine.

When a sweep's jobs share calls and run at once, which job pays for a shared call is a race: a paid
chat call and a cached one carry the same tokens, but a cached embedding carries none. Then
(`shared_calls=True`) each run is compared on what it did (its calls per stage, its predictions
without their usage split) and the sweep as a whole on what it paid (`paid`).
"""

from __future__ import annotations

import json
from pathlib import Path

VOLATILE = {"meta.json": ("started", "git_commit"), "index.json": ("corpora",)}
COMPARED = ("config.yaml", "predictions.jsonl", "judgments.jsonl", "metrics.json", "results.md",
            "meta.json", "index.json")


def folder_view(run: Path, ignore: dict[str, tuple[str, ...]] | None = None,
                shared_calls: bool = False) -> dict[str, object]:
    """A run folder's artifacts with its sweep root replaced by <tmp> and the volatile fields dropped
    (`ignore` adds fields, compared by the caller), plus what each stage did per usage.json."""
    out: dict[str, object] = {}
    dropped = {name: VOLATILE.get(name, ()) + (ignore or {}).get(name, ()) for name in COMPARED}
    for name in COMPARED:
        text = (run / name).read_text().replace(str(run.parents[2]), "<tmp>")
        if dropped[name]:
            data = json.loads(text)
            for key in dropped[name]:
                data.pop(key, None)
            out[name] = data
        elif name == "predictions.jsonl" and shared_calls:
            out[name] = [_calls_only(json.loads(line)) for line in text.splitlines() if line.strip()]
        else:
            out[name] = text
    usage = json.loads((run / "usage.json").read_text())  # who paid may differ; what was done may not
    out["usage"] = {s: [v["fresh"]["calls"] + v["cached"]["calls"],
                        *([] if shared_calls else [v["fresh"]["prompt_tokens"] + v["cached"]["prompt_tokens"]])]
                    for s, v in usage["stages"].items()}
    return out


def _calls_only(prediction: dict) -> dict:
    prediction["usage"] = {stage: u["calls"] for stage, u in (prediction.get("usage") or {}).items()}
    return prediction


def paid(runs: list[Path]) -> dict[str, list[int]]:
    """What a sweep paid per stage, over all its runs: fresh calls, prompt and completion tokens."""
    out: dict[str, list[int]] = {}
    for run in runs:
        for stage, v in json.loads((run / "usage.json").read_text())["stages"].items():
            row = out.setdefault(stage, [0, 0, 0])
            for i, key in enumerate(("calls", "prompt_tokens", "completion_tokens")):
                row[i] += v["fresh"][key]
    return out


def assert_same(serial: dict, other: dict) -> None:
    assert serial.keys() == other.keys()
    differ = [(name, part) for name in serial for part in serial[name]
              if other[name][part] != serial[name][part]]
    assert not differ, differ
