"""The baselines' index counters for `memeval health`, read from the package's own saved index
(`<corpus folder>/package/`) and the worker's index_done.json; no package is imported.

Example values are the packages' own extraction prompts' (HippoRAG's one-shot "Radio City"
passage, LightRAG's entity-type list), copied from their sources at the pinned versions; a
stored name equal to one that the unit's text does not contain was copied from the prompt.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..base import IndexCounters
from ..output_guard import ChunkText, copied, name_counts, quoting

DONE = "index_done.json"
# hipporag 2.0.0a4 prompts/templates/ner.py and triple_extraction.py: the one-shot example
HIPPORAG_EXAMPLES = ("Radio City", "India", "3 July 2001", "Hindi", "English", "May 2008", "PlanetRadiocity.com",
                     "private FM radio station", "New Media", "music portal")
# lightrag-hku 1.5.7 prompt.py: default_entity_types_guidance (the types, and Other) and the JSON
# example's placeholders; an entity named like a type ("Person") is a type copied as a name
LIGHTRAG_EXAMPLES = ("Person", "Creature", "Organization", "Location", "Event", "Concept", "Method", "Content",
                     "Data", "Artifact", "NaturalObject", "Other", "UNKNOWN", "<entity_name>", "<related_entity_name>")


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def worker_index(folder: Path) -> dict[str, Any]:
    """What the worker's `index` op returned, as index_done.json keeps it ({} before it is written)."""
    done = _json(folder / DONE) if (folder / DONE).exists() else {}
    return done.get("index") or {}


def hipporag2_counters(folder: Path) -> IndexCounters | None:
    """Units: passages (chapters/sessions); structures: phrase nodes (entities) and triples."""
    files = sorted((folder / "package").glob("openie_results*.json"))
    if not files:
        return None
    docs = _json(files[0]).get("docs", [])
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


def lightrag_counters(folder: Path) -> IndexCounters | None:
    """Units: the documents inserted (chapters/sessions); structures: entities and relations per
    document (kv_store_full_entities / kv_store_full_relations)."""
    pkg = folder / "package"
    if not (pkg / "kv_store_full_entities.json").exists():
        return None
    entities = _json(pkg / "kv_store_full_entities.json")
    relations = _json(pkg / "kv_store_full_relations.json") if (pkg / "kv_store_full_relations.json").exists() else {}
    docs = _json(pkg / "kv_store_full_docs.json") if (pkg / "kv_store_full_docs.json").exists() else {}
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


# graphrag 3.3.0 prompts/index/extract_graph.py and community_report.py: the invented names of
# their examples. A 0.5B index writes them into a conversation's entities and reports.
GRAPHRAG_EXAMPLES = ("Verdant Oasis Plaza", "Unity March", "Harmony Assembly", "Tribune Spotlight", "Firuzabad",
                     "Samuel Namara", "Quintara", "Aurelia", "TechGlobal", "Vision Holdings", "Meggie Tazbah",
                     "Durke Bataglani", "Tiruzia", "Alhamia Prison", "Krohaara", "Bratinas", "Central Institution",
                     "Verdantis", "Martin Smith")


def _parquet(path: Path) -> Any:
    import pandas as pd  # only when the tables are there (a bundle leaves them out)

    return pd.read_parquet(path)


def _column(table: Any, name: str) -> list[str]:
    """A table's text column as strings ([] without the table or the column)."""
    return [] if table is None or name not in table.columns else [str(v) for v in table[name]]


def graphrag_counters(folder: Path) -> IndexCounters | None:
    """Units: text units. With the output parquet tables: entities and relationships per text
    unit; without them (bundles keep no binary tables) the totals of index_done.json, whose
    shortfall below one per unit is a lower bound on the units without any (`at_least`).
    Communities are counted for the corpus: fewer than two is no community structure."""
    out = folder / "package" / "output"
    counts = worker_index(folder).get("counts", {})
    extra = {"totals": counts}
    if (out / "entities.parquet").exists() and (out / "text_units.parquet").exists():
        units = _parquet(out / "text_units.parquet")
        ent = _parquet(out / "entities.parquet")
        rel = _parquet(out / "relationships.parquet") if (out / "relationships.parquet").exists() else None
        ids = [str(u) for u in units["id"]]

        def touched(table: Any) -> set[str]:
            return set() if table is None else {str(t) for ts in table["text_unit_ids"] for t in list(ts)}

        names = [str(t) for t in ent["title"]]
        n, bad, samples = name_counts(names)
        reports = _parquet(out / "community_reports.parquet") if (out / "community_reports.parquet").exists() else None
        stored = [v for v in names + _column(ent, "description") + _column(rel, "description")
                  + _column(reports, "full_content") if v.strip()]
        copies = quoting(stored, ChunkText(" ".join(_column(units, "text"))), GRAPHRAG_EXAMPLES)
        return IndexCounters(
            units=len(ids), empty={"entities": [sum(1 for i in ids if i not in touched(ent)), len(ids)],
                                   "relationships": [sum(1 for i in ids if i not in touched(rel)), len(ids)]},
            names=n, names_not_noun_phrase=bad, name_samples=samples,
            example_copies=len(copies), copy_samples=sorted(set(copies))[:5], values=len(stored), extra=extra)
    if not counts.get("text_units"):
        return None
    n_units = int(counts["text_units"])
    empty = {k: [max(0, n_units - int(counts.get(k, 0))), n_units] for k in ("entities", "relationships")}
    return IndexCounters(units=n_units, empty=empty, at_least=sorted(empty), extra=extra)


# graphiti-core 0.31.2 prompts/extract_nodes.py: the extraction prompts' example entities. Several
# are LoCoMo's own content (Nate's "Gamecube", "red and purple lighting", a "cracked windshield";
# "We won by a tight score" from conv-43), so on LoCoMo a copy can also be a true mention: the
# counter flags only names that the episode's text does not contain (the worker checks).
GRAPHITI_EXAMPLES = ("Jordan", "Denver", "Lockheed Martin", "Belmont Arts Center", "ceramics", "Nisha",
                     "Nisha's dad", "Riverside Park", "Mary", "Trigger", "dog leash", "road cycling", "wool coat",
                     "Nate", "gaming room", "red and purple lighting", "Gamecube", "Ford Mustang", "Mustang",
                     "cracked windshield", "Moen faucet", "Alex", "Dr. Amara Osei", "AAN", "migraine study",
                     "CGRP combination protocol", "Jordan Lee", "Acme Corp", "Jordan's dog", "Jordan's cat")


COPY_SHARE = 0.8  # a memory copies its unit when this share of its word 6-grams are the unit's own
_WORD = re.compile(r"[a-z0-9']+")


def _six_grams(text: str) -> list[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return [tuple(words[i:i + 6]) for i in range(len(words) - 5)]


def source_copies(memories: list[tuple[str, str]]) -> list[int]:
    """[memories that copy their unit's text, memories long enough to tell (6 words or more)],
    over (memory, its unit's text) pairs: a stored fact restates, a copy repeats whole runs of
    words (mem0 at 1.5B on EpBench stored the chapters' sentences as they were)."""
    copied = counted = 0
    unit_grams: dict[str, set[tuple[str, ...]]] = {}
    for memory, unit_text in memories:
        grams = _six_grams(memory)
        if not grams:
            continue
        if unit_text not in unit_grams:
            unit_grams[unit_text] = set(_six_grams(unit_text))
        counted += 1
        copied += sum(g in unit_grams[unit_text] for g in grams) >= COPY_SHARE * len(grams)
    return [copied, counted]


def structured_calls(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """What the package's structured (JSON) model calls gave, summed over the units."""
    keys = ("chat_attempts", "chat_failed", "schema_invalid")
    keys += ("schema_repaired",) if any("schema_repaired" in e for e in episodes) else ()  # mem0 since 2026-12-04
    out: dict[str, Any] = {k: sum(int(e.get(k, 0)) for e in episodes) for k in keys}
    out["failed_units"] = sum(1 for e in episodes if e.get("error"))
    return out


def graphiti_counters(folder: Path) -> IndexCounters | None:
    """Units: episodes (sessions, chapters); structures: facts (entity edges) and entities per
    episode, from the worker's per-episode record (index_done.json, package/episodes.json)."""
    episodes = _episodes(folder)
    if not episodes:
        return None
    absent = [str(n) for e in episodes for n in e.get("entities_not_in_text", [])]
    copies = copied(absent, ChunkText(""), GRAPHITI_EXAMPLES)
    return IndexCounters(
        **_per_episode(episodes, "facts"),
        example_copies=len(copies), copy_samples=sorted(set(copies))[:5],
        extra={"structured_calls": structured_calls(episodes),
               "facts_per_unit": [int(e.get("facts", 0)) for e in episodes]})


def _per_episode(episodes: list[dict[str, Any]], facts_label: str) -> dict[str, Any]:
    """The counters Graphiti's and cognee's per-episode records share: units, the episodes
    without facts (reported as `facts_label`) or entities, and the entity names' shape."""
    n, bad, samples = name_counts([str(x) for e in episodes for x in e.get("entities", [])])
    return {"units": len(episodes),
            "empty": {facts_label: [sum(1 for e in episodes if not e.get("facts")), len(episodes)],
                      "entities": [sum(1 for e in episodes if not e.get("entities")), len(episodes)]},
            "names": n, "names_not_noun_phrase": bad, "name_samples": samples}


def _episodes(folder: Path) -> list[dict[str, Any]] | None:
    episodes = worker_index(folder).get("episodes")
    if episodes is None and (folder / "package" / "episodes.json").exists():
        episodes = _json(folder / "package" / "episodes.json")
    return episodes or None


def cognee_counters(folder: Path) -> IndexCounters | None:
    """Units: the sessions (chapters) cognified; structures: graph edges and entities extracted
    from each, from the worker's per-session record. cognee's prompts hold no example entities
    from the benchmarks (its graph prompt's examples are Alice, Acme, Marie Curie, World War I)."""
    episodes = _episodes(folder)
    if not episodes:
        return None
    return IndexCounters(
        **_per_episode(episodes, "edges"),
        extra={"structured_calls": structured_calls(
            [{**e, "chat_attempts": e.get("structured_calls", 0)} for e in episodes]),
               "edges_per_unit": [int(e.get("facts", 0)) for e in episodes]})
