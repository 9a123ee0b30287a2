"""Test double: Embedding RAG whose answers come from the method itself (the `answer` hook), to
check that the harness records a method's own answer and skips the shared answer call."""

from __future__ import annotations

from typing import Any

from memeval.datasets.types import Question
from memeval.methods.base import NativeAnswer, Retrieval
from memeval.methods.embedding_rag import EmbeddingRAG


class SelfAnsweringRAG(EmbeddingRAG):
    def __init__(self, *args: Any, answer_with: str = "package", **kw: Any):
        super().__init__(*args, **kw)
        self.answer_with = answer_with

    async def answer(self, index: Any, question: Question, retrieval: Retrieval) -> NativeAnswer | None:
        if self.answer_with != "package":
            return None
        return NativeAnswer(f"own answer from {len(retrieval.units)} unit(s)", {"prompt": "double"})
