"""The support scorer against hand labels (evaluation/judge_meta/support_labels.jsonl): precision
and recall of "unsupported" and accuracy, at each claim threshold tried, so the threshold in
conf/health/default.yaml is read from figures (`memeval audit support-calibration` prints them).

Each label names its claim's corpus and source units (null: the whole corpus); the claim is
scored as the checks score it (its frame cut, support_text against those units).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .support import CorpusSource, _verdict, frame_cut


@dataclass(frozen=True)
class Figures:
    threshold: float
    n: int  # labels judged (a claim with too little content is left out, as the check leaves it)
    tp: int
    fp: int
    fn: int
    tn: int
    skipped: int

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def accuracy(self) -> float | None:
        return (self.tp + self.tn) / self.n if self.n else None


def score_labels(labels: list[dict[str, Any]], corpora: dict[tuple[str, str], Any], th: dict[str, Any],
                 thresholds: list[float]) -> list[Figures]:
    """Figures per claim threshold. `corpora`: (dataset, corpus id) -> Corpus; labels of a corpus
    not given are skipped."""
    sources: dict[tuple[str, str], CorpusSource] = {}
    out = []
    for t in thresholds:
        tp = fp = fn = tn = skipped = 0
        for lab in labels:
            key = (str(lab["dataset"]), str(lab["corpus_id"]))
            if key not in corpora:
                skipped += 1
                continue
            src = sources.get(key) or sources.setdefault(key, CorpusSource(corpora[key], th.get("subject_words") or ()))
            units = tuple(str(u) for u in lab["source_units"]) if lab.get("source_units") else None
            verdict, _ = _verdict(frame_cut(str(lab["claim"])), src.source(units), {**th, "claim_share": t})
            if verdict is None:
                skipped += 1
                continue
            gold = lab["label"] == "unsupported"
            tp += verdict and gold
            fp += verdict and not gold
            fn += (not verdict) and gold
            tn += (not verdict) and not gold
        out.append(Figures(t, tp + fp + fn + tn, tp, fp, fn, tn, skipped))
    return out


def table(figures: list[Figures]) -> str:
    def f(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"
    lines = ["| claim_share | judged | skipped | precision | recall | accuracy | tp fp fn tn |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {x.threshold:.2f} | {x.n} | {x.skipped} | {f(x.precision)} | {f(x.recall)} | {f(x.accuracy)} | "
              f"{x.tp} {x.fp} {x.fn} {x.tn} |" for x in figures]
    return "\n".join(lines)
