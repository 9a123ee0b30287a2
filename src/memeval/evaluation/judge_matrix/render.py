"""The judge-sensitivity matrix as a Markdown table and a figure, from judge_matrix.json alone
(so the report can show a saved matrix without judging anything)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from ..phrases import declared
from ..protocol import fmt


def _headline_only(matrix: dict[str, Any]) -> bool:
    """Since format 3 a matrix scores only the questions its protocol's headline counts."""
    return matrix.get("scope") == "headline"


def _answered(matrix: dict[str, Any]) -> str:
    return "every run answered" + (" that the headline counts" if _headline_only(matrix) else "")


def sample(matrix: dict[str, Any]) -> str:
    """Which questions were re-judged: all those every run answered, or every k-th of them."""
    every = int(matrix.get("every", 1))
    if every <= 1:
        return f"{matrix['n_questions']} questions {_answered(matrix)}"
    return (f"{matrix['n_questions']} questions (1 in {every} of the {matrix.get('n_shared', '?')} "
            f"{_answered(matrix)}, in question order)")


def scope_note(matrix: dict[str, Any]) -> str:
    """Which questions a score averages, as the matrix's format recorded it."""
    scores = [f"{name}: {score}" for name, score in declared("matrix_score")]
    if _headline_only(matrix):
        counted = [f"{name}: {which}" for name, which in declared("matrix_headline")]
        said = "; ".join([*counted, *scores])
        return "the questions the protocol's headline counts" + (f" ({said})" if said else "")
    return f"the shared questions ({'; '.join(['adversarial and unanswerable ones included', *scores])})"


def cell(matrix: dict[str, Any], run: dict[str, Any], criterion: str) -> str:
    """One run's score under one criterion, its rank in brackets (shared by equal scores, marked
    "=": four methods at 0.500 are all "1=", not ranked 1-4 by name) and its judge failures."""
    score, failed = run["scores"][criterion], run["judge_failed"][criterion]
    others = [r["scores"][criterion] for r in matrix["runs"] if r is not run and r["scores"][criterion] is not None]
    rank = "" if score is None else f"{1 + sum(o > score for o in others)}{'=' if score in others else ''}"
    return ("–" if score is None else f"{fmt(score)} ({rank})") + (f" [{failed} failed]" if failed else "")


NOT_RECORDED = "not recorded (a matrix of format 1)"


def setup(matrix: dict[str, Any]) -> str:
    """Answering model(s), judge and the strict criterion's grounding: the setup of the scores."""
    def joined(key: str) -> str:
        values = list(dict.fromkeys(str(r.get(key, NOT_RECORDED)) for r in matrix["runs"]))
        return " | ".join(values) + ("  **DIFFERS**" if len(values) > 1 else "")

    versions = {r.get("grounding_version") for r in matrix["runs"]} - {None}
    grounding = f"; strict grounding v{' | v'.join(map(str, sorted(versions)))}" if versions else ""
    return f"answering model: {joined('answer_model')}; judge: {matrix['judge']}{grounding}"


def health(run: dict[str, Any]) -> str:
    return str(run.get("health", NOT_RECORDED))


def table(matrix: dict[str, Any]) -> str:
    """Score per method per criterion (rank in brackets) with the run's health, then Kendall's tau
    between criteria."""
    crit = list(matrix["criteria"])
    lines = [f"Judge-sensitivity matrix: {matrix['dataset']}, {sample(matrix)}", "", setup(matrix), "",
             "| method | " + " | ".join(crit) + " | health |", "|---|" + "---|" * (len(crit) + 1)]
    for run in matrix["runs"]:
        lines.append(f"| {run['method']} | " + " | ".join(cell(matrix, run, c) for c in crit) + f" | {health(run)} |")
    lines += ["", "Kendall's tau between the criteria's method rankings:", "",
              "| | " + " | ".join(crit) + " |", "|---|" + "---|" * len(crit)]
    for a in crit:
        lines.append(f"| {a} | " + " | ".join(fmt(matrix["kendall_tau"][a][b], 2) for b in crit) + " |")
    lines += ["", f"Score: the mean per-question score over {scope_note(matrix)}. (n) = the method's rank "
              "under that criterion "
              "(n= : tied); a judge failure is left out of the mean and counted. Tau – : undefined, a "
              "criterion that scores every method alike has no ranking to compare.",
              "Criteria: " + "; ".join(f"{c} = {d}" for c, d in matrix["criteria"].items()) + ".",
              f"Judge calls: {matrix['calls'].get('fresh', 0)} fresh, {matrix['calls'].get('cached', 0)} "
              "from the cache."]
    return "\n".join(lines) + "\n"


def figure(matrix: dict[str, Any], path: Path) -> Path:
    """Two panels: score by method and criterion, and tau between criteria (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    crit, methods = list(matrix["criteria"]), [r["method"] for r in matrix["runs"]]
    scores = np.array([[np.nan if r["scores"][c] is None else r["scores"][c] for c in crit]
                       for r in matrix["runs"]], dtype=float)
    tau = np.array([[np.nan if matrix["kendall_tau"][a][b] is None else matrix["kendall_tau"][a][b]
                     for b in crit] for a in crit], dtype=float)
    fig, (left, right) = plt.subplots(1, 2, figsize=(4 + 1.3 * len(crit) * 2, 1.5 + 0.45 * len(methods)))
    x = np.arange(len(methods))
    width = 0.8 / max(1, len(crit))
    for k, c in enumerate(crit):
        left.barh(x + k * width, scores[:, k], height=width, label=c)
    status = [health(r).split(":", 1)[0] for r in matrix["runs"]]  # a failed run must not read as a result
    left.set_yticks(x + width * (len(crit) - 1) / 2,
                    [m if s in ("ok", NOT_RECORDED) else f"{m} (health: {s})" for m, s in zip(methods, status, strict=True)])
    left.set_xlabel("score")
    left.set_xlim(0, 1)
    left.legend(fontsize=7, loc="lower right")
    left.set_title(f"{matrix['dataset']}: score by criterion")
    im = right.imshow(tau, vmin=-1, vmax=1, cmap="RdBu")
    right.set_xticks(range(len(crit)), crit, rotation=30, ha="right")
    right.set_yticks(range(len(crit)), crit)
    for i in range(len(crit)):
        for j in range(len(crit)):
            dark = not np.isnan(tau[i, j]) and abs(tau[i, j]) > 0.5
            right.text(j, i, "–" if np.isnan(tau[i, j]) else f"{tau[i, j]:.2f}", ha="center", va="center",
                       fontsize=8, color="white" if dark else "black")
    right.set_title("Kendall tau of the rankings")
    fig.colorbar(im, ax=right, fraction=0.046)
    fig.suptitle("\n".join(textwrap.wrap(f"{setup(matrix)}; {sample(matrix)}", 110)), fontsize=8, x=0.01, ha="left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
