"""The method plugin contract: index a corpus, then retrieve the context for a question.

A plugin knows nothing about judging, files or tracking. The harness hands it `Services`
(models, the context cap, a store for index artifacts) and answers with the shared answering
model from the context the plugin returns, so every method is answered the same way.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from memeval.datasets.types import ContextCap, Corpus, Question, Unit
from memeval.model_access.chat import ChatModel
from memeval.model_access.embed import Embedder
from memeval.model_access.tokenizer import count_tokens
from memeval.settings_history import Record

from .stored_claims import StoredClaim


@dataclass
class NativeAnswer:
    """An answer a method produced with its own prompt (opt-in, e.g. `answer_with: package`)."""

    text: str
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass
class Retrieval:
    """What a method puts before the answering model, and where it came from."""

    context_text: str
    units: list[str]
    extras: dict[str, Any] = field(default_factory=dict)


class IndexStore:
    """A folder for one (method, corpus, config) index; plugins save and load JSON through it."""

    def __init__(self, root: Path):
        self.root = root

    def path(self, name: str) -> Path:
        p = self.root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def exists(self, name: str) -> bool:
        return (self.root / name).exists()

    def save_json(self, name: str, obj: Any) -> Path:
        p = self.path(name)
        tmp = p.with_suffix(p.suffix + ".tmp")
        tmp.write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(p)
        return p

    def load_json(self, name: str) -> Any:
        return json.loads((self.root / name).read_text(encoding="utf-8"))


@dataclass
class IndexCounters:
    """What one corpus' index holds, counted from its own folder, for `memeval health`.

    The method counts (it alone knows its files); evaluation/health judges the counts against
    thresholds, never reading a method's files itself. Plain data, so the layer above hands it
    across the methods/evaluation divide as a dict (`to_dict`).
    - `empty`: per extracted structure, [units without any of it, units counted] (a unit is what
      the method extracts from: chapter, session, passage or frame); `at_least`: the structures
      whose empty count is a lower bound (only totals were readable, e.g. GraphRAG's parquet
      tables are not bundled: 2 relationships over 19 units leave at least 17 without one);
    - `names` / `names_not_noun_phrase`: extracted entity names and those that are pronouns or
      clauses (methods.output_guard.name_problem), with a few `name_samples`;
    - `example_copies`: stored values equal to the extraction prompt's invented examples that
      their passage does not contain (what an output guard would have dropped);
    - `values`: how many stored values the copy count was taken over, where they are not the
      names (mem0 stores sentences: its memories); 0 = the names;
    - `extra`: figures of the method's own; `extra["fusion"]` ({judged, merged, contradicting,
      contradicting_reasons}) is read by the merge checks.
    """

    units: int
    empty: dict[str, list[int]] = field(default_factory=dict)
    at_least: list[str] = field(default_factory=list)
    names: int = 0
    names_not_noun_phrase: int = 0
    name_samples: list[str] = field(default_factory=list)
    example_copies: int = 0
    values: int = 0
    copy_samples: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass
class Services:
    """Shared components the harness provides to a method."""

    llm: ChatModel  # the shared answering model (methods may also use it for indexing)
    embedder: Embedder
    cap: ContextCap
    store_root: Path
    index_llm: ChatModel | None = None  # model for index-time calls; defaults to llm

    def store(self, corpus_id: str) -> IndexStore:
        return IndexStore(self.store_root / corpus_id)

    @property
    def indexer(self) -> ChatModel:
        return self.index_llm or self.llm


class MemoryMethod(ABC):
    """Base class; subclasses take their YAML parameters as keyword arguments."""

    exempt_from_cap = False  # only Vanilla (everything in context) sets this
    # The exact strings a package returns in place of a context when it found nothing (LightRAG's
    # fail_response): `memeval health` counts such a context as empty, whatever its length.
    no_context_markers: ClassVar[tuple[str, ...]] = ()
    # The exact label strings the method's context format writes around its memory (section
    # headers, field names), which the corpus need not write: `memeval health`'s unsourced_names
    # check cuts them out before it reads a context's names (evaluation/health/names.py).
    context_labels: ClassVar[tuple[str, ...]] = ()
    # The invented example texts of the method's prompts, its own and its package's (whole
    # passages, replies or values): `memeval health`'s prompt_example_phrases check counts a word
    # n-gram of one (n >= 2, not all stopwords, not in the corpus) found in an index or a context
    # as a copy of the prompt (evaluation/health/example_phrases.py).
    prompt_examples: ClassVar[tuple[str, ...]] = ()
    # Parameters that say where an input lives on this machine, not what it holds (another
    # parameter pins its content, e.g. a sha256): left out of the run identity, so the same input
    # read from another folder (a bundle, a fresh clone) is the same run.
    location_params: ClassVar[tuple[str, ...]] = ()
    # Whether the index calls have no interactivity between units (no call waits on another's
    # reply), so `memeval estimate` prices them at the Batch API's discount too.
    batch_index: ClassVar[bool] = False
    # The version of the output guard every extraction of the method passes (no switch turns it
    # off), which meta.json's experiment names against a reference; "none" without one.
    output_guard_version: ClassVar[str] = "none"
    # The settings the method gained after runs were saved without them, and the index parameters
    # that joined its index identity later (memeval/settings_history.py): what their absence
    # meant, so the upgrade layer reads an older saved config and index folder as they were made.
    settings_history: ClassVar[tuple[Record, ...]] = ()

    @classmethod
    def index_claims(cls, folder: Path) -> list[StoredClaim] | None:
        """Each claim the index of one corpus stores (fact, memory, summary line, frame slot,
        graph edge) with the units its provenance names, read from its folder with no model, for
        `memeval health`'s support check; None when the method does not read its layout."""
        return None

    def __init__(self, services: Services, name: str | None = None):
        self.services = services
        self.name = name or type(self).__name__

    @abstractmethod
    async def build_index(self, corpus: Corpus) -> Any:
        """Build (or load) the index of one corpus; the returned object is passed to retrieve."""

    @abstractmethod
    async def retrieve(self, index: Any, question: Question) -> Retrieval:
        """The context for one question, within the services' context cap."""

    def params(self) -> dict[str, Any]:
        """Parameters that define the index (hashed into the index folder name)."""
        return {}

    async def answer(self, index: Any, question: Question, retrieval: Retrieval) -> NativeAnswer | None:
        """The method's own answer, or None (the default) for the harness's shared prompt and model."""
        return None

    @classmethod
    def index_counters(cls, folder: Path) -> IndexCounters | None:
        """Counts of what the index of one corpus holds, read from its folder (the store of that
        corpus) with no model; None when the method extracts nothing (its index is the text)."""
        return None

    def close(self) -> None:
        """Release what the method holds (worker processes, servers); called after the stages."""
        return None

    @staticmethod
    def tokens(text: str) -> int:
        return count_tokens(text)


def unit_title(u: Unit) -> str:
    """A unit's title (or 'Session <id>'), with its date when it has one."""
    title = u.title or f"Session {u.id}"
    return f"{title} ({u.timestamp})" if u.timestamp else title


def unit_block(corpus: Corpus, unit_id: str, text: str | None = None) -> str:
    """How a unit is shown to the answering model: its title (or id and date), then its text."""
    u = corpus.unit(unit_id)
    return f"### {unit_title(u)}\n{text if text is not None else u.text}"
