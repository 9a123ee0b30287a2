"""Imported answers as a method: answers made elsewhere (any system, any API), read, not generated.

`memeval import-answers FILE dataset=...` (cli/import_answers.py) selects this plugin with the file
(datasets/answers_file.py): the index stage builds nothing (each corpus' "index" is the file's
answers), retrieve() hands over the context the file published (or the no-context marker, which
`memeval health` counts as an empty context), and answer() returns the file's answer as the method's
own (`answered_by: method`), so no model is called before the judge. The file is checked against
the sha256 the run's config recorded: a changed file is refused, never silently re-imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from memeval.datasets.answers_file import AnswerRow, AnswersFile, read_answers
from memeval.datasets.types import Corpus, Question
from memeval.model_access.errors import ConfigError

from .base import MemoryMethod, NativeAnswer, Retrieval, Services

# the copy of the answers file a run folder keeps (`memeval import-answers` writes it), so the folder
# is self-contained: a bundle ships it and a replay reads it wherever the original file was
RUN_COPY = "imported_answers.jsonl"
# what stands in the context of an answer whose source published no retrieved context
NO_CONTEXT = "[no context: this answer was imported; its source published no retrieved context]"


class ImportedAnswers(MemoryMethod):
    exempt_from_cap = True  # the context was not made here: the shared cap cannot have bounded it
    no_context_markers: ClassVar[tuple[str, ...]] = (NO_CONTEXT,)
    location_params: ClassVar[tuple[str, ...]] = ("answers_file",)  # answers_sha256 pins the content

    def __init__(self, services: Services, name: str | None = None, answers_file: str | None = None,
                 answers_sha256: str | None = None, answer_with: str = "imported",
                 imported: dict[str, Any] | None = None):
        super().__init__(services, name)
        if not answers_file or not answers_sha256:
            raise ConfigError("method=imported needs method.answers_file and method.answers_sha256: import a file "
                              "with `memeval import-answers FILE dataset=...`, which sets both")
        self.answers_file = str(answers_file)
        self.answers_sha256 = str(answers_sha256)
        self.answer_with = answer_with
        self._answers: dict[str, AnswerRow] | None = None
        model = (imported or {}).get("answering_model")
        if model is not None and services.llm is not None and services.llm.model != model:
            raise ConfigError(f"the run's answering model is {services.llm.model!r} but the imported answers are "
                              f"{model!r}'s: import with `memeval import-answers`, which names it (llm=imported)")

    def params(self) -> dict[str, Any]:
        return {"answers_sha256": self.answers_sha256}

    def answers(self) -> dict[str, AnswerRow]:
        if self._answers is None:
            found: AnswersFile = read_answers(Path(self.answers_file))
            if found.sha256 != self.answers_sha256:
                raise ConfigError(f"{self.answers_file} has sha256 {found.sha256}, not the {self.answers_sha256} "
                                  "this run imported: the file changed; import it again (a new run)")
            self._answers = found.by_id()
        return self._answers

    async def build_index(self, corpus: Corpus) -> dict[str, AnswerRow]:
        """Nothing is built: every corpus shares the file's answers."""
        return self.answers()

    def _row(self, index: dict[str, AnswerRow], question: Question) -> AnswerRow:
        row = index.get(question.id)
        if row is None:
            raise ConfigError(f"{self.answers_file} has no answer for question {question.id}")
        return row

    async def retrieve(self, index: dict[str, AnswerRow], question: Question) -> Retrieval:
        row = self._row(index, question)
        given = row.context is not None
        return Retrieval(row.context if given else NO_CONTEXT, [], {"imported": True, "context_published": given})

    async def answer(self, index: dict[str, AnswerRow], question: Question, retrieval: Retrieval) -> NativeAnswer:
        row = self._row(index, question)
        extras: dict[str, Any] = {"imported": True, "answers_sha256": self.answers_sha256}
        for key in ("published_verdict", "tokens", "latency_ms"):
            if getattr(row, key) is not None:
                extras[key] = getattr(row, key)
        if row.extra:
            extras["extra"] = row.extra
        return NativeAnswer(row.answer, extras)


def run_meta(method_cfg: Any) -> dict[str, Any]:
    """meta.json's `imported` block for a run of this plugin (harness/pipeline.py): where the answers
    came from, and that nothing was indexed or answered here. Empty for every other method, so
    their meta.json stays as it was."""
    block = method_cfg.get("imported") if hasattr(method_cfg, "get") else None
    if not block:
        return {}
    from omegaconf import OmegaConf

    provenance = OmegaConf.to_container(block, resolve=True) if not isinstance(block, dict) else dict(block)
    return {"imported": {**provenance, "answers_file": str(method_cfg.get("answers_file")),
                         "answers_sha256": str(method_cfg.get("answers_sha256")),
                         "produced_here": {"index": False, "answer": False}}}
