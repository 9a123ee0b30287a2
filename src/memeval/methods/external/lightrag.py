"""LightRAG hybrid mode (lightrag-hku 1.5.7) with the GSW paper's settings (Table 9)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memeval.methods.base import IndexCounters, Services

from ..output_guard import ChunkText, copied, name_counts
from ..stored_claims import StoredClaim, read_json
from .base import ExternalMethod
from .cost_model import CostModel, IndexCall
from .counters import load_json
from .envs import EnvSpec

# lightrag-hku 1.5.7 prompt.py: default_entity_types_guidance (the types, and Other) and the JSON
# example's placeholders; an entity named like a type ("Person") is a type copied as a name
LIGHTRAG_EXAMPLES = ("Person", "Creature", "Organization", "Location", "Event", "Concept", "Method", "Content",
                     "Data", "Artifact", "NaturalObject", "Other", "UNKNOWN", "<entity_name>", "<related_entity_name>")


def lightrag_counters(folder: Path) -> IndexCounters | None:
    """Units: the documents inserted (chapters/sessions); structures: entities and relations per
    document (kv_store_full_entities / kv_store_full_relations)."""
    pkg = folder / "package"
    if not (pkg / "kv_store_full_entities.json").exists():
        return None
    entities = load_json(pkg / "kv_store_full_entities.json")
    relations = load_json(pkg / "kv_store_full_relations.json") if (pkg / "kv_store_full_relations.json").exists() else {}
    docs = load_json(pkg / "kv_store_full_docs.json") if (pkg / "kv_store_full_docs.json").exists() else {}
    ids = sorted(set(entities) | set(relations) | set(docs))
    names: list[str] = []
    copies: list[str] = []
    for i in ids:
        ents = [str(e) for e in (entities.get(i) or {}).get("entity_names", [])]
        names += ents
        copies += copied(ents, ChunkText(str((docs.get(i) or {}).get("content", ""))), LIGHTRAG_EXAMPLES)
    n, bad, samples = name_counts(names)
    return IndexCounters(
        units=len(ids),
        empty={"entities": [sum(1 for i in ids if not (entities.get(i) or {}).get("entity_names")), len(ids)],
               "relations": [sum(1 for i in ids if not (relations.get(i) or {}).get("relation_pairs")), len(ids)]},
        names=n, names_not_noun_phrase=bad, name_samples=samples,
        example_copies=len(copies), copy_samples=sorted(set(copies))[:5])


class LightRAGMethod(ExternalMethod):
    """Chapters inserted as documents; the hybrid-mode context (only_need_context) per question.
    Document chunks are capped to `cap` chapters (workers/lightrag_worker.py)."""

    env_spec = EnvSpec("lightrag", "lightrag.txt", worker="lightrag_worker.py", probe="lightrag",
                       build_cost=("370 MB", "a few minutes"))
    # lightrag-hku 1.5.7's default pipeline, per 1,200-token chunk (approximate prompt sizes, +-50%)
    cost_model = CostModel(chunk=(1200, 100), calls=(
        IndexCall("entity_extraction", 1, 1900, 700),
        IndexCall("entity_extraction gleaning (1)", 1, 2700, 300),
    ), query_calls=(IndexCall("keywords_extraction", 1, 900, 100, False),),
        context_tokens=30000, embed_per_chunk=1200 + 15 * 40)
    # its package's extraction prompt examples (above), for the phrase-copy health check
    prompt_examples = LIGHTRAG_EXAMPLES
    section_header = (r"(?m)^(?P<name>Knowledge Graph Data \((?:Entity|Relationship)\)|Document Chunks"
                      r"|Reference Document List)")
    capped_sections = ("Document Chunks", "Reference Document List")  # entities, relations are not

    # lightrag-hku 1.5.7 prompt.py PROMPTS["fail_response"]: what only_need_context returns when
    # the keyword search finds no entity, relation or chunk (21 of 40 bundled EpBench contexts)
    no_context_markers = ("Sorry, I'm not able to provide an answer to that question.[no-context]",)
    # the package's context template: its section headers and their example heading path
    # and the JSON keys its entity, relation and chunk lines are written with
    context_labels = ("Knowledge Graph Data", "Document Chunks", "Reference Document List",
                      "Section 1 → Subsection 1.2", '"reference_id"', '"content"', '"entity1"', '"entity2"',
                      '"entity"', '"type"', '"description"', '"created_at"', '"file_path"', "\\n")

    def __init__(self, services: Services, name: str | None = None, mode: str = "hybrid",
                 chunk_token_size: int = 1200, chunk_overlap_token_size: int = 100,
                 top_k: int | None = None, chunk_top_k: int | None = None,
                 max_total_tokens: int | None = None, llm_max_async: int = 4, **kw: Any):
        super().__init__(services, name, **kw)
        self._settings: dict[str, Any] = {
            "mode": mode, "chunk_token_size": chunk_token_size,
            "chunk_overlap_token_size": chunk_overlap_token_size, "llm_max_async": llm_max_async}
        # None = the package's own default (read from lightrag.constants, never from the environment)
        for key, value in (("top_k", top_k), ("chunk_top_k", chunk_top_k), ("max_total_tokens", max_total_tokens)):
            if value is not None:
                self._settings[key] = value

    @classmethod
    def index_counters(cls, folder: Path) -> IndexCounters | None:
        return lightrag_counters(folder)

    @classmethod
    def index_claims(cls, folder: Path) -> list[StoredClaim] | None:
        """Each entity's and relation's description, one per merged part ("<SEP>"), with the
        units its `file_path` names (the package's vector stores keep both)."""
        if not (folder / "package" / "vdb_relationships.json").exists():
            return None
        out: list[StoredClaim] = []
        for name, kind, head in (("vdb_entities.json", "entity", 1), ("vdb_relationships.json", "relation", 2)):
            for row in (read_json(folder / "package" / name) or {}).get("data") or []:
                body = str(row.get("content") or "").split("\n", head)[-1]  # past the name line(s)
                units = tuple(u for u in str(row.get("file_path") or "").split("<SEP>") if u) or None
                out.extend(StoredClaim(p.strip(), units, f"LightRAG {kind}") for p in body.split("<SEP>") if p.strip())
        return out

    def settings(self) -> dict[str, Any]:
        return dict(self._settings)
