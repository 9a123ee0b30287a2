"""HippoRAG 2 (hipporag 2.0.0a4) with the GSW paper's settings (Table 8); passages = chapters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memeval.methods.base import IndexCounters, Services

from ..output_guard import ChunkText, copied, name_counts
from ..stored_claims import StoredClaim, read_json
from .base import ExternalMethod
from .cost_model import CostModel, IndexCall
from .counters import load_json, worker_index
from .envs import EnvSpec

# HippoRAG imports vllm at module level but never uses it with API models; this stand-in makes
# the import succeed and fails loudly if anything actually tries to run vLLM.
VLLM_STANDIN = '''"""Stand-in for vllm (installed by memeval): HippoRAG imports it, API models never use it."""


class _Unavailable:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("vllm is a stand-in in this environment; use an OpenAI-compatible endpoint")


class LLM(_Unavailable):
    pass


class SamplingParams(_Unavailable):
    pass
'''


# hipporag 2.0.0a4 prompts/templates/ner.py and triple_extraction.py: the one-shot example
HIPPORAG_EXAMPLES = ("Radio City", "India", "3 July 2001", "Hindi", "English", "May 2008", "PlanetRadiocity.com",
                     "private FM radio station", "New Media", "music portal")


def hipporag2_counters(folder: Path) -> IndexCounters | None:
    """Units: passages (chapters/sessions); structures: phrase nodes (entities) and triples."""
    files = sorted((folder / "package").glob("openie_results*.json"))
    if not files:
        return None
    docs = load_json(files[0]).get("docs", [])
    names: list[str] = []
    copies: list[str] = []
    values = 0  # the copies are counted over entities and triple values together: the share's base
    for d in docs:
        ents = [str(e) for e in d.get("extracted_entities", [])]
        triple_values = [str(v) for t in d.get("extracted_triples", []) for v in t]
        names += ents
        values += len(ents) + len(triple_values)
        copies += copied(ents + triple_values, ChunkText(str(d.get("passage", ""))), HIPPORAG_EXAMPLES)
    n, bad, samples = name_counts(names)
    graph = worker_index(folder).get("graph", {})
    return IndexCounters(
        units=len(docs),
        empty={"entities": [sum(1 for d in docs if not d.get("extracted_entities")), len(docs)],
               "triples": [sum(1 for d in docs if not d.get("extracted_triples")), len(docs)]},
        names=n, names_not_noun_phrase=bad, name_samples=samples,
        example_copies=len(copies), copy_samples=sorted(set(copies))[:5], values=values, extra={"graph": graph})


class HippoRAG2Method(ExternalMethod):
    """OpenIE graph over chapters; `retrieve` gives the passages QA would read, top
    min(qa_top_k, cap) (workers/hipporag2_worker.py)."""

    env_spec = EnvSpec("hipporag2", "hipporag2.txt", no_deps=("hipporag==2.0.0a4", "gritlm==1.0.2"),
                       standins={"vllm": VLLM_STANDIN}, worker="hipporag2_worker.py", probe="hipporag",
                       build_cost=("1.5 GB", "several minutes"))
    # hipporag 2.0.0a4's default pipeline, per passage (a chapter; approximate prompt sizes, +-50%)
    cost_model = CostModel(calls=(
        IndexCall("ner", 1, 600, 150),
        IndexCall("triple_extraction", 1, 1100, 600),
    ), query_calls=(IndexCall("recognition_memory (fact filter)", 1, 1800, 100, False),),
        embed_per_chunk=1200 + 20 * 30)
    # its package's extraction prompt examples (above), for the phrase-copy health check
    prompt_examples = HIPPORAG_EXAMPLES

    def __init__(self, services: Services, name: str | None = None, qa_top_k: int = 17,
                 linking_top_k: int = 5, retrieval_top_k: int = 200,
                 max_new_tokens: int | None = None, **kw: Any):
        super().__init__(services, name, **kw)
        self._settings: dict[str, Any] = {"qa_top_k": qa_top_k, "linking_top_k": linking_top_k,
                                          "retrieval_top_k": retrieval_top_k}
        if max_new_tokens is not None:
            self._settings["max_new_tokens"] = max_new_tokens

    @classmethod
    def index_counters(cls, folder: Path) -> IndexCounters | None:
        return hipporag2_counters(folder)

    @classmethod
    def index_claims(cls, folder: Path) -> list[StoredClaim] | None:
        """Each OpenIE triple, read as "subject predicate object"; its passage is not read, so
        each triple is compared with the whole corpus."""
        paths = sorted((folder / "package").glob("openie_results*.json"))
        if not paths:
            return None
        out: list[StoredClaim] = []
        for doc in (d for path in paths for d in (read_json(path) or {}).get("docs") or []):
            triples = doc.get("extracted_triples") or []
            if isinstance(triples, str):  # a triple list saved as its Python repr
                try:
                    triples = json.loads(triples.replace("'", '"'))
                except ValueError:
                    triples = []
            out.extend(StoredClaim(" ".join(str(x) for x in t), None, "HippoRAG triple")
                       for t in triples if isinstance(t, list | tuple) and t)
        return out

    def settings(self) -> dict[str, Any]:
        return dict(self._settings)
