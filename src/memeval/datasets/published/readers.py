"""One reader per published LoCoMo source: its folder under data/published/ -> an answers file's
header and rows (datasets/answers_file.py), every row placed by the alignment rules (align.py).

Each source's own verdicts are kept per row in `published_verdict` (as published: a list of 3
booleans, a bool, or a 0/1 score) and its aggregate rule in the header's judge.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..answers_file import AnswerRow, AnswersFileError, sha256_of
from . import sources
from .align import Candidate, LoCoMoQuestions, align, undo


@dataclass
class Converted:
    header: dict[str, Any]
    rows: list[AnswerRow]
    notes: list[str] = field(default_factory=list)


def _load(path: Path) -> Any:
    if not path.is_file():
        raise AnswersFileError(f"no {path.name} in {path.parent}: is this the right source folder?")
    return json.loads(path.read_text(encoding="utf-8"))


def _header(base: dict[str, Any], files: list[Path], data: LoCoMoQuestions, notes: list[str]) -> dict[str, Any]:
    source = dict(base["source"])
    source["sha256"] = {f.name: sha256_of(f) for f in files}
    return {**base, "source": source, "dataset": data.dataset.name, "data_version": data.version,
            "notes": notes}


def _groups(obj: dict[str, Any], prefix: str) -> list[tuple[int, list[dict[str, Any]]]]:
    """`{prefix<i>: rows}` by conversation index i (some files scramble the key order)."""
    out = []
    for key, rows in obj.items():
        m = re.fullmatch(re.escape(prefix) + r"(\d+)", key)
        if m is None:
            raise AnswersFileError(f"unexpected key {key!r} (expected {prefix}<i>)")
        out.append((int(m.group(1)), rows))
    return sorted(out, key=lambda g: g[0])


def _verdicts(judgments: dict[str, Any]) -> list[bool]:
    return [bool(judgments[k]) for k in sorted(judgments, key=lambda k: int(k.rsplit("_", 1)[1]))]


def _rows(ids: list[str], made: list[dict[str, Any]]) -> list[AnswerRow]:
    return [AnswerRow(question_id=q, **m) for q, m in zip(ids, made, strict=True)]


def read_evermemos(folder: Path, data: LoCoMoQuestions) -> Converted:
    path = folder / "judged.json"
    cands, made = [], []
    for i, rows in _groups(_load(path), "locomo_exp_user_"):
        for k, r in enumerate(rows):
            cands.append(Candidate(f"locomo_exp_user_{i} #{k}", i, position=k, question=r["question"],
                                   gold=r["golden_answer"], category=int(r["category"])))
            made.append({"answer": str(r["answer"]), "published_verdict": _verdicts(r["llm_judgments"]),
                         "latency_ms": float(r.get("total_duration_ms") or 0.0)})
    ids = align(cands, data, str(path))
    return Converted(_header(sources.EVERMEMOS, [path], data, []), _rows(ids, made))


_FC_ID = re.compile(r"^locomo_(\d+)_qa(\d+)$")


def read_fc(folder: Path, data: LoCoMoQuestions) -> Converted:
    path = folder / "eval_results.json"
    obj = _load(path)
    meta = obj.get("metadata") or {}
    cands, made = [], []
    for i, rows in _groups(obj["detailed_results"], "locomo_exp_user_"):
        for k, r in enumerate(rows):
            m = _FC_ID.match(str(r.get("question_id", "")))
            if m is None or int(m.group(1)) != i:  # the id's conversation must be its group's
                cands.append(Candidate(f"{r.get('question_id')!r} in locomo_exp_user_{i}", -1, position=0))
            else:
                cands.append(Candidate(r["question_id"], i, qa_index=int(m.group(2)), position=k,
                                       question=r["question"], gold=r["golden_answer"], category=int(r["category"])))
            made.append({"answer": str(r["generated_answer"]), "published_verdict": _verdicts(r["llm_judgments"])})
    ids = align(cands, data, str(path))
    base = sources.fc(str(meta.get("answer_model", "?")), str(meta.get("answer_prompt", "?")),
                      _fc_result_folder(meta))
    notes = [f"run scores as published: {meta.get('run_scores')}; majority of 3: {meta.get('majority_vote_accuracy')}",
             f"mean prompt tokens {meta.get('mean_prompt_tokens')}, completion {meta.get('mean_completion_tokens')} "
             "(per-question tokens not published)"]
    return Converted(_header(base, [path], data, notes), _rows(ids, made))


def _fc_result_folder(meta: dict[str, Any]) -> str:
    """The results folder name the audit repository uses: <model>-<cot|memos>."""
    prompt = str(meta.get("answer_prompt", ""))
    return f"{meta.get('answer_model')}-{'cot' if prompt.endswith('cot') else 'memos'}"


def read_zep(folder: Path, data: LoCoMoQuestions) -> Converted:
    resp_path, grade_path = folder / "zep_locomo_responses.json", folder / "zep_locomo_grades.json"
    responses = dict(_groups(_load(resp_path), "locomo_experiment_user_"))
    grades = dict(_groups(_load(grade_path), "locomo_experiment_user_"))
    if set(responses) != set(grades):
        raise AnswersFileError(f"{folder}: responses and grades hold other conversations "
                               f"({sorted(responses)} vs {sorted(grades)})")
    cands, made = [], []
    for i in sorted(responses):
        rs, gs = responses[i], grades[i]
        if len(rs) != len(gs):
            raise AnswersFileError(f"{folder}: conversation {i} has {len(rs)} responses but {len(gs)} grades")
        for k, (r, g) in enumerate(zip(rs, gs, strict=True)):
            same = all(r[f] == g[f] for f in ("question", "answer", "golden_answer"))
            cands.append(Candidate(f"locomo_experiment_user_{i} #{k}" + ("" if same else " (grades row differs)"),
                                   i if same else -1, position=k, question=r["question"], gold=r["golden_answer"],
                                   category=int(g["category"])))
            made.append({"answer": str(r["answer"]), "published_verdict": bool(g["grade"]),
                         "latency_ms": float(r.get("duration_ms") or 0.0)})
    ids = align(cands, data, str(resp_path))
    return Converted(_header(sources.ZEP, [resp_path, grade_path], data, []), _rows(ids, made))


def read_memobase(folder: Path, data: LoCoMoQuestions) -> Converted:
    files = sorted(folder.glob("memobase_eval_*_3000.json"))
    if len(files) != 1:
        raise AnswersFileError(f"{folder}: expected one memobase_eval_<tag>_3000.json, found {[f.name for f in files]}")
    path = files[0]
    tag = path.name.split("_")[2]
    if tag not in sources.MEMOBASE_VERSIONS:
        raise AnswersFileError(f"{path}: unknown Memobase run {tag!r} (known: {sorted(sources.MEMOBASE_VERSIONS)})")
    cands, made = [], []
    for i, rows in _groups(_load(path), ""):
        for k, r in enumerate(rows):
            cands.append(Candidate(f"{i} #{k}", i, position=k, question=r["question"], gold=r["answer"],
                                   category=int(r["category"])))
            made.append({"answer": str(r["response"]), "published_verdict": int(r["llm_score"]),
                         "extra": {"bleu_score": r.get("bleu_score"), "f1_score": r.get("f1_score")}})
    ids = align(cands, data, str(path))
    notes = ["the README labels categories 1/3/4 single-hop/multi-hop/open-domain (the reverse of LoCoMo's): "
             "compare by category number"]
    return Converted(_header(sources.memobase(tag), [path], data, notes), _rows(ids, made))


def read_cognee(folder: Path, data: LoCoMoQuestions) -> Converted:
    files = sorted((folder / "qa").glob("locomo_metrics_conv*_run0.json"),
                   key=lambda p: int(re.search(r"conv(\d+)_", p.name).group(1)))  # type: ignore[union-attr]
    if not files:
        raise AnswersFileError(f"no qa/locomo_metrics_conv*_run0.json in {folder}")
    cands, made = [], []
    for path in files:
        conv = int(re.search(r"conv(\d+)_", path.name).group(1))  # type: ignore[union-attr]
        for k, r in enumerate(_load(path)):
            i, j = int(r["conversation_index"]), int(r["question_idx"])
            ok = i == conv and j == k  # file conv<i>, row k: question k of conversation i
            cands.append(Candidate(f"{path.name} #{k}", i if ok else -1, qa_index=j, category=int(r["category"]),
                                   sample_id=str(r["conversation_id"])))
            judge = (r.get("metrics") or {}).get("llm_judge") or {}
            made.append({"answer": str(r["answer"]), "published_verdict": float(judge["score"]),
                         "extra": {"published_reason": judge.get("reason"), "question_type": r.get("question_type")}})
    ids = align(cands, data, str(folder / "qa"))
    extra_files = [folder / n for n in ("gold_exclusions.json", "run_config.json", "locomo_summary.json")
                   if (folder / n).is_file()]
    notes = ["no question or gold text in these files: aligned by (conversation_index, question_idx) and category",
             "gold_exclusions.json (143 questions the published score leaves out) is not part of this file"]
    return Converted(_header(sources.COGNEE, [*files, *extra_files], data, notes), _rows(ids, made))


def read_memu(folder: Path, data: LoCoMoQuestions) -> Converted:
    path = folder / "result.json"
    rows = _load(path)["detailed_results"]
    cands, made = [], []
    conv, last = -1, None
    for k, r in enumerate(rows):
        j = int(r["qa_index"])
        if last is None or j <= last:  # the flat list starts a conversation where qa_index stops rising
            conv += 1
        last = j
        sid = data.samples[conv] if 0 <= conv < len(data.samples) else "?"
        renames = sources.MEMU_RENAMES.get(sid, ())
        cands.append(Candidate(f"detailed_results #{k}", conv, qa_index=j, question=r["question"],
                               gold=r["standard_answer"], category=int(r["category"]), renames=renames))
        answer = str(r["generated_answer"])
        back = undo(answer, renames)
        extra: dict[str, Any] = {"published_reason": r.get("explanation")}
        if back != answer:
            extra["published_answer"] = answer
        made.append({"answer": back, "published_verdict": bool(r["is_correct"]), "extra": extra})
    ids = align(cands, data, str(path))
    notes = ["memU ran on a renamed copy of LoCoMo (conv-43 John -> Juan, conv-47 John -> Jack): the renames are "
             "undone in the answers too (extra.published_answer keeps a changed answer as published)",
             "2 category-5 rows (conv-26 qa 167, 178) are included, as published"]
    return Converted(_header(sources.MEMU, [path], data, notes), _rows(ids, made))


READERS: dict[str, Callable[[Path, LoCoMoQuestions], Converted]] = {
    "evermemos": read_evermemos, "fc": read_fc, "zep": read_zep, "memobase": read_memobase,
    "cognee": read_cognee, "memu": read_memu,
}
