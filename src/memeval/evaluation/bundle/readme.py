"""The bundle's README.md: what is in it, how to check it, what its numbers are and are not.

Written from the bundled run folders alone (meta.json, metrics.json, config.yaml), so it can
never describe a model or dataset the runs did not use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from ..phrases import and_list, grouped
from .manifest import CALLS, data_licence, judge_agreement


def _model_kind(node: dict[str, Any]) -> str:
    model = str(node.get("model") or "?")
    if node.get("server"):
        return f"{model} (a small local model served by llama.cpp, weights pinned by sha256)"
    if "gpt-4o" in model:
        return f"{model} (OpenAI)"
    return f"{model} (an OpenAI-compatible endpoint)"


def _run_facts(bundle: Path, rel: str) -> dict[str, Any]:
    run = bundle / rel
    meta = json.loads((run / "meta.json").read_text(encoding="utf-8"))
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    cfg = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8")) or {}
    llm, judge = _model_kind(cfg.get("llm") or {}), _model_kind(cfg.get("judge") or {})
    if isinstance(meta.get("imported"), dict):  # answered elsewhere; its verdicts may be its source's too
        llm = f"{meta.get('answer_model')} (elsewhere: imported answers of {meta['imported'].get('system', '?')})"
        if (meta.get("protocol") or {}).get("verdicts") == "published":
            judge = f"{meta.get('judge_model')} (the source's published verdicts, grounded here; no judge call here)"
    loader = ((cfg.get("dataset") or {}).get("loader") or {}).get("_target_")
    return {"rel": rel, "meta": meta, "metrics": metrics, "llm": llm, "judge": judge, "licence": data_licence(loader),
            "local": bool((cfg.get("llm") or {}).get("server")), "local_judge": bool((cfg.get("judge") or {}).get("server"))}


def render(bundle: Path, manifest: dict[str, Any]) -> str:
    facts = [_run_facts(bundle, r["path"]) for r in manifest["runs"]]
    name = manifest["name"]
    lines = [f"# Result bundle `{name}`", "",
             f"Exported {manifest['created']} from memeval commit `{manifest['git_commit']}`"
             f"{' (working tree had uncommitted changes)' if manifest.get('git_dirty') else ''}: "
             f"{len(facts)} run(s), {manifest['calls']['entries']} model calls.", "",
             "## Check it yourself", "", "```bash",
             f"git checkout {manifest['git_commit']}    # then setup and `python scripts/fetch_data.py`",
             f"memeval bundle verify results/{name}   # reruns every run from the bundled calls",
             f"memeval bundle import results/{name}   # loads the calls into your cache",
             "```", "",
             "`verify` checks every file's sha256 (manifest.json), imports the calls into a scratch cache "
             "(never yours), reruns each run from its config.yaml through the normal pipeline with new "
             "model calls forbidden (no model server is started, no API key is read), and passes only if "
             "every run makes 0 new calls and rewrites its metrics.json byte for byte.", "",
             "The report: [report/report.md](report/report.md) (also report.html and report/figures/).", "",
             *([f"The explorer: [{manifest['explorer']['index']}]({manifest['explorer']['index']}), every question "
                "and method side by side (open it from disk, no server; `bundle verify` checks it is current).", ""]
               if manifest.get("explorer") else []),
             *([f"Build notes (what was measured while building, what broke and its fix, what is missing): "
                f"[{manifest['notes']}]({manifest['notes']}).", ""] if manifest.get("notes") else []),
             "## Runs", "",
             "| run | method | dataset (data version) | questions | answering model | judge | judge agreement |",
             "|---|---|---|---|---|---|---|"]
    for f in facts:
        m = f["meta"]
        lines.append(f"| `{f['rel']}` | {m.get('method')} | {m.get('dataset')} ({m.get('data_version')}) | "
                     f"{m.get('n_questions')} | {m.get('answer_model')} | {m.get('judge_model')} | "
                     f"{judge_agreement(f['metrics'])} |")
    lines += ["", "## What these numbers are, and what they are not", ""]
    for desc in sorted({(f["llm"], f["judge"]) for f in facts}):
        lines.append(f"- Answered by {desc[0]}; judged by {desc[1]}.")
    if any(f["local"] or f["local_judge"] for f in facts):
        lines += ["- **These are local numbers.** A small local model answered (and judged) on the "
                  "question subset each run names. They are **not** GPT-4o's numbers and are not "
                  "comparable to the papers' GPT-4o figures. What they do support is a comparison of "
                  "methods under identical conditions: the same answering model and prompt, the same "
                  "judge, the same context cap and the same questions.",
                  "- A small judge is lenient: with a local judge the headline credit is the grounded "
                  "one (a credit is kept only when the answer text supports it); raw credit, the "
                  "papers' protocol, is reported beside it in metrics.json and the report."]
    if not any("gpt-4o" in f["llm"] for f in facts):
        lines.append("- No run here used GPT-4o.")
    checks = "; ".join(f"on {and_list(names)} {check}" for names, check in grouped("agreement_check"))
    lines += ["- **Judge agreement** compares the LLM judge's verdicts with a model-free check"
              f"{': ' + checks if checks else ''}. High agreement says the judge credits roughly what "
              "the answer text supports; low agreement says its scores should not be read alone. It "
              "is consistency with a simple check, not accuracy against human labels (that is "
              "`memeval judge-check`)."]
    if min((int(f["meta"].get("n_questions") or 0) for f in facts), default=0) < 100:
        lines.append("- With a few dozen questions per run the bootstrap intervals are wide; small differences "
                     "between methods are not evidence.")
    else:
        lines.append("- A difference between two methods counts only when the paired table calls it "
                     "significant; the report prints the smallest difference the question count can detect.")
    lines += ["", "## Data and licences", ""]
    for _, licence in sorted(dict(f["licence"] for f in facts).items()):
        lines.append(f"- {licence}")
    versions = sorted({str(f["meta"].get("data_version")) for f in facts})
    lines += [f"- Data version(s): {', '.join(f'`{v}`' for v in versions)} (see the project's "
              "`../shared/data/SOURCES.md` for provenance and sha256 of every file).",
              "- The benchmark files are not in this bundle, but the run folders quote them: question "
              "texts, gold answers and the context passages sent to the model (predictions.jsonl, "
              "judgments.jsonl). Those excerpts stay under the dataset's licence.", "",
              "## Layout", "",
              "- `runs/<dataset>/<run>/`: the run folders as written by `run.py` (config.yaml, meta.json, "
              "index.json, predictions.jsonl, judgments.jsonl, metrics.json, usage.json(l), results.md). A "
              "JSONL file of 0.5 MB or more ships packed as `NAME.jsonl.xz` (contexts repeat across "
              "questions); the project's commands read it as `NAME.jsonl`, and `xzcat` prints it.",
              "- `indexes/<index folder>/`: the methods' readable index artifacts, rebuilt from the bundled "
              "calls during export (a method's own `render` module, where it has one, reads them).",
              f"- `{CALLS}`: every model call behind the runs, one JSON line each "
              "(`key` = content address of the request, `sha256` of the reply, `value`).",
              "- `keys/<dataset>/<run>.txt`: the cache keys each run read.",
              "- `report/`: `memeval report` over the bundled runs.",
              *([f"- `{manifest['judge_matrix']['dir']}/`: the judge-sensitivity matrix (`memeval judge-matrix`, "
                 f"every {manifest['judge_matrix'].get('every') or 1}th shared question; judge "
                 f"{manifest['judge_matrix'].get('judge')}), shown in the report and the explorer."]
                if manifest.get("judge_matrix") else []),
              "- `manifest.json`: sha256 of every file, git commit, package versions, data versions."]
    skipped = manifest.get("skipped") or []
    if skipped:
        total = sum(int(s["bytes"]) for s in skipped)
        lines += ["", f"Left out: {len(skipped)} index file(s), {total / 1e6:.1f} MB (large or binary: embedding "
                  "matrices, tables). Neither the report nor the notebooks read them, and `verify` rebuilds "
                  "them from the calls; manifest.json lists each."]
    return "\n".join(lines) + "\n"
