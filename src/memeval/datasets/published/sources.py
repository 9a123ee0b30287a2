"""What each published LoCoMo source is, as the answers header states it (data/published/*/PROVENANCE.md).

Facts only (models, prompt names, judges, how the published score was computed, licences, origins),
written once here so every converted file says the same; the readers (readers.py) add the file's own
sha256 and the data version it was aligned with.
"""

from __future__ import annotations

from typing import Any

GENEROUS = "the Mem0/LoCoMo generous CORRECT/WRONG prompt"
NC = "non-commercial"


def _judge(model: str, prompt: str, runs: int, verdict: str, aggregate: str, score: str) -> dict[str, Any]:
    return {"model": model, "prompt": prompt, "runs": runs, "verdict": verdict, "aggregate": aggregate,
            "published_score": score}


EVERMEMOS: dict[str, Any] = {
    "name": "evermemos", "system": "EverMemOS", "system_version": "memsys 0.1.0 @ ca13859 (experiment event_log)",
    "answering_model": "gpt-4.1-mini-2025-04-14",
    "answer_prompt": {"name": "ANSWER_PROMPT_NEMORI_COT (chain of thought; answer after 'FINAL ANSWER:')"},
    "judge": _judge("gpt-4o-mini", GENEROUS, 3, "list of 3 booleans, one per judge run; true = CORRECT",
                    "accuracy of each judge run over the 1540 category 1-4 questions, then the mean of the 3 runs",
                    "README 92.3%; this file 92.45% (mean of runs), 92.53% (majority of 3)"),
    "source": {"url": "https://github.com/EverMind-AI/EverMemOS", "commit": "ca138594f0634c7379f28a775476389a07b613a2",
               "files": ["evaluation/locomo_evaluation/results_ref/locomo_evaluation_event_log/judged.json"]},
    "licence": "Apache-2.0 (question and gold text: LoCoMo, CC BY-NC 4.0)",
}

FC_SOURCE = {"url": "https://github.com/dial481/locomo-audit", "commit": "9493fb4b4af4256ed17a18e8fd0b3cfdeec29539"}
FC_PROMPTS = {"answer_prompt_cot": "answer_prompt_cot (EverMemOS 7-step chain of thought, no word limit)",
              "answer_prompt_memos": "answer_prompt_memos (answer under 5-6 words)"}


# the audit's README scores of its four full-context runs (SOURCES.md "Published LoCoMo answers")
FC_SCORES = {"gpt-4.1-mini-cot": "92.62%", "gpt-4.1-mini-memos": "81.95%", "gpt-4o-mini-cot": "79.89%",
             "gpt-4o-mini-memos": "74.29%"}


def fc(answer_model: str, prompt: str, folder: str) -> dict[str, Any]:
    """A full-context baseline of the LoCoMo audit (its metadata names model and prompt)."""
    short = "cot" if prompt.endswith("cot") else "memos"
    name = f"fc-{answer_model.replace('-', '').replace('.', '')}-{short}"
    return {
        "name": name, "system": "full context (no memory)", "role": "full-context baseline",
        "system_version": f"dial481/locomo-audit fc-baseline ({answer_model}, {prompt})",
        "answering_model": answer_model, "answer_prompt": {"name": FC_PROMPTS.get(prompt, prompt)},
        "judge": _judge("gpt-4o-mini", GENEROUS, 3, "list of 3 booleans, one per judge run; true = CORRECT",
                        "accuracy of each judge run over the 1540 questions, then the mean of the 3 runs",
                        f"{FC_SCORES.get(folder, '?')} (fc-baseline/README.md, mean of 3 runs)"),
        "source": {**FC_SOURCE, "files": [f"fc-baseline/results/{folder}/eval_results.json"]},
        "licence": f"CC BY-NC 4.0 ({NC}; attribute to github dial481/locomo-audit)",
    }


ZEP: dict[str, Any] = {
    "name": "zep", "system": "Zep", "system_version": "Zep Cloud temporal knowledge graph (2025-05)",
    "answering_model": "gpt-4o-mini",
    "answer_prompt": {"name": "zep_locomo_responses.py 'think step by step' over facts and entities"},
    "judge": _judge("gpt-4o-mini", GENEROUS, 1, "boolean `grade` of zep_locomo_grades.json; true = CORRECT",
                    "mean grade over the 1540 category 1-4 questions (one judge run published)",
                    "README 75.14 +/- .17%; this file 75.13%"),
    "source": {"url": "https://github.com/getzep/zep-papers", "commit": "4b7f26cc76cca20743314ba9acb8c2cb6adc42f6",
               "files": ["kg_architecture_agent_memory/locomo_eval/data/zep_locomo_responses.json",
                         "kg_architecture_agent_memory/locomo_eval/data/zep_locomo_grades.json"]},
    "licence": f"CC BY-NC-SA 4.0 ({NC}, share-alike: derived files carry the same licence)",
}

MEMOBASE_VERSIONS = {"0503": "v0.0.32", "0710": "v0.0.37"}
MEMOBASE_SCORES = {"0503": "README 70.91%", "0710": "README 75.78%"}


def memobase(tag: str) -> dict[str, Any]:
    return {
        "name": f"memobase-{tag}", "system": "Memobase", "system_version": MEMOBASE_VERSIONS[tag],
        "answering_model": "undocumented (code default gpt-4o)",
        "answer_prompt": {"name": "ANSWER_PROMPT of Mem0's evaluation (answer in less than 5-6 words)"},
        "judge": _judge("gpt-4o-mini", GENEROUS, 1, "`llm_score` 0/1; 1 = CORRECT",
                        "mean llm_score over the 1540 category 1-4 questions", MEMOBASE_SCORES[tag]),
        "source": {"url": "https://github.com/memodb-io/memobase", "commit": "358c16bbc6d687937d79bc2f984a11c3be8da901",
                   "files": [f"docs/experiments/locomo-benchmark/fixture/memobase/memobase_eval_{tag}_3000.json"]},
        "licence": "Apache-2.0 (question and gold text: LoCoMo, CC BY-NC 4.0)",
    }


COGNEE: dict[str, Any] = {
    "name": "cognee", "system": "cognee", "system_version": "cognee 1.5.4 hybrid_completion 20/20/20 (artifacts of 1.6.5)",
    "answering_model": "openai/gpt-5-mini",
    "answer_prompt": {"name": "eval_framework/locomo/qa_prompts/unified.txt",
                      "sha256": "5c340b1a10cabd22142dc311f932ba2a16042c44eac62be2305da20317844c60"},
    "judge": _judge("openai/gpt-5.1 (reasoning medium)", "eval_framework/locomo/prompts/locomo_judge_prompt.txt "
                    "(strict rubric)", 1, "metrics.llm_judge.score, 1.0 = CORRECT, 0.0 = WRONG",
                    "mean score over categories 1, 2, 4 and 5 minus the 143 questions of gold_exclusions.json "
                    "(1762 questions), one run", "README 90.7% of 1,762"),
    "source": {"url": "https://pypi.org/project/cognee/1.6.5/",
               "wheel_sha256": "aaef9fdc02f542b1d125cde21759dde2fac56355d8928e39c734e7b5c6705eca",
               "files": ["cognee/eval_framework/locomo/report_artifacts/qa/*.json"]},
    "licence": "Apache-2.0 (artifacts refer to LoCoMo questions, CC BY-NC 4.0, by id)",
}

MEMU: dict[str, Any] = {
    "name": "memu", "system": "memU", "system_version": "memu 0.1.6 @ 6941e9a (run undated)",
    "answering_model": "undocumented (earlier harness default gpt-4.1-mini)",
    "answer_prompt": None,
    "judge": _judge("undocumented (earlier harness default gpt-4.1)", GENEROUS, 1, "boolean `is_correct`; true = CORRECT",
                    "total_correct / total rows: 1420 / 1542 (2 category-5 rows included)", "README 92.09%"),
    "source": {"url": "https://github.com/NevaMind-AI/memU", "commit": "6941e9a9c158626699686a26e8ddab5f19148c84",
               "files": ["scripts/evals/locomo/result.json"]},
    "licence": "Apache-2.0 (question and gold text: LoCoMo, CC BY-NC 4.0)",
}
# memU ran on a copy of locomo10.json with every "John" renamed, per conversation (PROVENANCE.md)
MEMU_RENAMES: dict[str, tuple[tuple[str, str], ...]] = {"conv-43": (("Juan", "John"),), "conv-47": (("Jack", "John"),)}
