"""The support checks: what an index stores and what a context says that the source does not.

- index `unsupported_claims`: each claim an index folder stores (stored.py: facts, memories,
  summary lines, frame slots, graph edges) against the units it came from where the method
  records them, else its whole corpus (support_text.py scores it): the share of claims whose
  unsupported content passes `claim_share`;
- context `unsupported_claims`: each sentence of each context (the method's labels cut out)
  against its whole corpus: a memory may rightly join facts of several units, so only content
  the corpus never holds counts. The value is the share of unsupported sentences per context,
  averaged over questions; the questions whose context holds any are named. A source-text
  method (Vanilla, Embedding RAG) hands over the source itself and scores near 0;
- index `speaker_swaps` (speakers.py): in a conversation, a stored claim whose subject is one
  speaker and whose best-supporting turn was said by the other.

These read content words, numbers, times and dates only: an invention written with the corpus's
own words ("Jon lost his job at the dance studio") passes, so the figures are lower bounds.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..answer_text import sentences
from ..runs.health_file import Check
from .grading import check, not_measured, pct, share
from .speakers import speaker_swaps_check
from .stored import Claim
from .support_text import Source, content, unsupported_share

NAME = "unsupported_claims"
# a context format's frame, whatever the method: Markdown headings ("## Related facts"), bracketed
# references ("[7.1]", "[Jon]", "[passage 3]") and lower-case field names ("role:", "states:")
_FRAME = re.compile(r"^#+ .*$|\[[^\]\n]{1,30}\]|(?:(?<=^)|(?<=[\s;(|]))[a-z][a-z_ ]{0,24}:(?=\s)", re.M)


def frame_cut(text: str, labels: tuple[str, ...] = ()) -> str:
    """The text without the method's declared labels and the generic frame (_FRAME)."""
    for label in sorted(labels, key=len, reverse=True):
        text = text.replace(label, "\n")
    return _FRAME.sub(" ", text)


class CorpusSource:
    """One corpus's sources, each built once: the whole corpus and any set of its units."""

    def __init__(self, corpus: Any, extra_words: Iterable[str] = ()):
        self.units = {str(u.id): u for u in corpus.units}
        self._sets: dict[tuple[str, ...] | None, Source] = {}
        self.extra = tuple(extra_words)

    def source(self, units: tuple[str, ...] | None) -> Source:
        known = tuple(sorted(u for u in units or () if u in self.units)) or None
        if known not in self._sets:
            chosen = [self.units[u] for u in known] if known else list(self.units.values())
            texts = [t for u in chosen for t in (u.text, u.title or "", u.timestamp or "", str(u.id))]
            self._sets[known] = Source([*texts, *self.extra])
        return self._sets[known]


def _verdict(text: str, source: Source, th: dict[str, Any]) -> tuple[bool | None, list[str]]:
    """(unsupported?, its unsupported items); None for a claim with too little content to judge."""
    if content(text).size < int(th.get("min_content", 2)):
        return None, []
    value, items = unsupported_share(text, source, int(th.get("date_window", 7)))
    if value is None:
        return None, []
    return value > float(th["claim_share"]), items


def _example(text: str, items: list[str]) -> str:
    short = text if len(text) <= 120 else text[:117] + "..."
    return f"{short!r} ({', '.join(items[:5])})"


def index_support_check(claims: dict[str, list[Claim] | None] | None, dataset: Any,
                        th: dict[str, Any], labels: tuple[str, ...] = ()) -> Check:
    """Share of an index's stored claims whose content the source does not hold."""
    if claims is None:
        return not_measured(NAME, "index", th, "nothing extracted: the index is the text itself")
    if dataset is None:
        return not_measured(NAME, "index", th, "the run's benchmark data is not on this machine")
    read = {cid: c for cid, c in claims.items() if c is not None and cid in dataset.corpora}
    if not read:
        return not_measured(NAME, "index", th, "no stored claims readable in the index folder")
    words = th.get("subject_words") or ()
    judged = bad = 0
    examples: Counter[str] = Counter()
    for cid, items in read.items():
        sources = CorpusSource(dataset.corpora[cid], words)
        for claim in items:
            verdict, missing = _verdict(frame_cut(claim.text, labels), sources.source(claim.units), th)
            if verdict is None:
                continue
            judged += 1
            if verdict:
                bad += 1
                examples[_example(claim.text, missing)] += 1
    if not judged:
        return not_measured(NAME, "index", th, "no stored claim with content to compare")
    what = f"{pct(bad, judged)} stored claims hold content their source units never write"
    if examples:
        what += "; e.g. " + "; ".join(e for e, _ in examples.most_common(3))
    return check(NAME, "index", share(bad, judged), th, what)


def context_claims(context: str, labels: tuple[str, ...], markers: tuple[str, ...]) -> list[str]:
    """A context's sentences and list lines, the method's labels, no-context markers and frame cut out."""
    for m in markers:
        context = context.replace(m, "\n")
    return sentences(frame_cut(context, labels))


def context_support_check(predictions: list[dict[str, Any]], dataset: Any, labels: tuple[str, ...],
                          markers: tuple[str, ...], th: dict[str, Any]) -> Check:
    """Share of each context's sentences whose content the corpus never writes, averaged over the
    questions; the questions with any are named, with each unsupported sentence «quoted»."""
    if dataset is None:
        return not_measured(NAME, "context", th, "the run's benchmark data is not on this machine")
    words = th.get("subject_words") or ()
    sources: dict[str, CorpusSource] = {}
    seen: dict[tuple[str, str], tuple[bool | None, list[str]]] = {}
    claims = {str(p.get("question_id")): context_claims(str(p.get("context_text") or ""), labels, markers)
              for p in predictions}
    frame = _frame_sentences(claims.values(), float(th.get("frame_share", 1.0)))
    shares: list[float] = []
    found: dict[str, str] = {}
    examples: Counter[str] = Counter()
    for p in predictions:
        cid = str(p.get("corpus_id"))
        if cid not in dataset.corpora:
            continue
        src = sources.get(cid) or sources.setdefault(cid, CorpusSource(dataset.corpora[cid], words))
        judged, bad = 0, []
        for sent in claims[str(p.get("question_id"))]:
            key = (cid, sent)
            if key not in seen:
                seen[key] = _verdict(sent, src.source(None), th)
            verdict, items = seen[key]
            if verdict is None or (verdict and sent in frame):
                continue
            judged += 1
            if verdict:
                bad.append((sent, items))
        if not judged:
            continue
        shares.append(len(bad) / judged)
        if bad:  # every sentence, «quoted», so the explorer can mark each in the context
            found[str(p.get("question_id"))] = f"{len(bad)} of {judged} sentences unsupported: " + "; ".join(
                f"«{' '.join(t.split())[:200]}» ({', '.join(i[:5])})" for t, i in bad)
            # once per context, in context order: ties in most_common then read the same in every process
            examples.update(dict.fromkeys(_example(t, i) for t, i in bad).keys())
    if not shares:
        return not_measured(NAME, "context", th, "no context sentence with content to compare")
    mean = round(sum(shares) / len(shares), 4)
    what = (f"{mean:.3f} of a context's sentences hold content the corpus never writes (mean over "
            f"{len(shares)} contexts); {pct(len(found), len(shares))} contexts hold at least one")
    if examples:
        what += "; most often " + "; ".join(f"{e} in {k}" for e, k in examples.most_common(3))
    frame = {f for f in frame if any(seen.get((c, f), (None,))[0] for c in sources)}
    if frame:
        shown = "; ".join(repr(f[:60]) for f in sorted(frame)[:3])
        what += f"; {len(frame)} sentences in (nearly) every context read as the method's frame, e.g. {shown}"
    return check(NAME, "context", mean, th, what, questions=found)


def _frame_sentences(contexts: Iterable[list[str]], at_least: float, min_contexts: int = 10) -> set[str]:
    """Sentences found in at least `at_least` of the contexts (of `min_contexts` or more): the
    method's own frame (a package's instructions, its section names) where it declares no
    labels. Listed in the message, never hidden: an invention in every context would be here."""
    lists = [set(c) for c in contexts if c]
    if len(lists) < min_contexts:
        return set()
    counts = Counter(s for c in lists for s in c)
    return {s for s, k in counts.items() if k >= at_least * len(lists)}


def support_checks(predictions: list[dict[str, Any]], claims: dict[str, list[Claim] | None] | None,
                   dataset: Any, labels: tuple[str, ...], markers: tuple[str, ...],
                   thresholds: dict[str, Any]) -> list[Check]:
    """The support checks of one scored run: index (stored claims, speaker swaps) and context.
    `thresholds`: the whole health thresholds (each scope's `unsupported_claims`, `speaker_swaps`)."""
    return [index_support_check(claims, dataset, thresholds["index"]["unsupported_claims"], labels),
            speaker_swaps_check(claims, dataset, thresholds["index"]["speaker_swaps"]),
            context_support_check(predictions, dataset, labels, markers, thresholds["context"]["unsupported_claims"])]
