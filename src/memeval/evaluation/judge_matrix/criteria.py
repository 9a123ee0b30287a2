"""The judging criteria of the judge-sensitivity matrix, and the prompts of the two LLM ones.

Four ways to decide whether a saved answer is right, from the strictest to the most generous:

- `strict`: this project's credit: the run's own protocol judge, then its protocol's current
  grounding version (no credit the answer gives no evidence for; EpBench 3, the conversations 2),
  as a new run's headline with grounded credit scores it;
- `per_type`: one rule per kind of question, in the manner of LongMemEval's official evaluation
  (temporal answers tolerate an off-by-one count, a knowledge update needs the latest value,
  preference answers are graded against a rubric, unanswerable questions need a refusal);
- `generous`: a topic match, in the manner of vendor harnesses: on topic is enough;
- `model_free`: no model at all (EpBench's deterministic matcher, the conversations' grounding
  check alone).

The prompts are written for this project, with invented examples only; both LLM criteria answer
with the CORRECT/WRONG verdict schema the LoCoMo judge uses.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ..phrases import declared


def _per_type() -> str:
    manners = list(dict.fromkeys(manner for _, manner in declared("per_type_manner")))
    return "one rule per question type" + (f", in the manner of {' and '.join(manners)}" if manners else "")


def _model_free() -> str:
    checks = list(dict.fromkeys(check for _, check in declared("model_free_check")))
    return "no model" + (f": {', '.join(checks)}" if checks else "")


class _Criteria(Mapping[str, str]):
    """criterion -> what it is (written into judge_matrix.json). The names are fixed; the
    per-type and model-free descriptions name the benchmarks whose rules and checks they use,
    as the installed protocols declare them (evaluation/phrases.py), read when asked."""

    _FIXED = {
        "strict": "the project's strict grounded credit (the run's judge, then its protocol's current grounding version)",
        "per_type": None,
        "generous": "a topic match: the reply is on the right subject, in the manner of vendor harnesses",
        "model_free": None,
    }

    def __getitem__(self, key: str) -> str:
        fixed = self._FIXED[key]
        if fixed is not None:
            return fixed
        return _per_type() if key == "per_type" else _model_free()

    def __iter__(self) -> Iterator[str]:
        return iter(self._FIXED)

    def __len__(self) -> int:
        return len(self._FIXED)


CRITERIA: Mapping[str, str] = _Criteria()
LLM_CRITERIA = ("per_type", "generous")
PROMPT_VERSION = "judge-matrix-v1"
QUESTION_TYPES = ("default", "temporal", "update", "preference", "abstention", "list", "account")

_JSON = 'Return JSON: {"reasoning": "<one sentence>", "label": "CORRECT" or "WRONG"}.'

GENEROUS = (
    "You check whether a reply to a question is on the right track, compared with a reference "
    "answer. Say CORRECT when the reply is about the same subject as the reference or touches on it "
    "in any way: partial answers, loose paraphrases, approximate dates and extra details are all "
    "fine. Say WRONG only when the reply is about something unrelated or gives no answer. For "
    "example, asked what Priya baked for the fair, with the reference 'a rhubarb pie', the reply "
    "'some kind of fruit dessert' is CORRECT and 'she stayed home that weekend' is WRONG. " + _JSON)

_TYPE_RULES = {
    "default": (
        "The reply is CORRECT when it contains the reference answer or says something equivalent. "
        "A reply that gives only part of what the reference needs is WRONG; extra details that do "
        "not contradict it are fine. For example, with the reference 'a canoe and a tent', 'a "
        "canoe' is WRONG and 'they bought a canoe and a tent at the market' is CORRECT."),
    "temporal": (
        "The question is about time. The reply is CORRECT when it gives the same date, day, "
        "duration or order as the reference, in any format. For a count of days, weeks or months, "
        "being off by one is still CORRECT (counting the first day or not). A vaguer period than "
        "the reference (a season for a day) or another date is WRONG. For example, with the "
        "reference '4 March 2021', 'March 4th, 2021' is CORRECT and 'spring 2021' is WRONG."),
    "update": (
        "The information changed over time and the reference is its latest value. The reply is "
        "CORRECT when it gives the latest value as the current one, even if it also mentions the "
        "earlier value; it is WRONG when it gives only the earlier value. For example, with the "
        "reference 'she now lives in Lyon (she moved from Porto)', 'Lyon' is CORRECT and 'Porto' "
        "is WRONG."),
    "preference": (
        "The reference is a rubric: what a good reply would take into account about the person "
        "(tastes, habits, circumstances). The reply is CORRECT when it uses that information "
        "sensibly, without needing every point; it is WRONG when it ignores it or contradicts it."),
    "abstention": (
        "The question cannot be answered from the material: it asks about something that never "
        "happened or was never said. The reply is CORRECT only when it says the information is "
        "not available or points out the false premise; any definite answer is WRONG."),
    "list": (
        "The reference is a list of items. The reply is CORRECT when it names every item of the "
        "list, in any wording, format or order, and adds no item that is not on it. A reply that "
        "misses an item or adds another one is WRONG. For example, with the reference ['Oslo', "
        "'Turku'], 'Turku and then Oslo' is CORRECT and 'Oslo, Turku and Riga' is WRONG."),
    "account": (
        "The reference is the passage that tells what happened. The reply is CORRECT when its "
        "account gives the passage's main content (who, what, where) and invents nothing that "
        "contradicts it; a reply that only restates the question, or tells another story, is WRONG."),
}


def per_type_system(question_type: str) -> str:
    return ("You grade a reply to a question against a reference answer, by the rule for this kind "
            f"of question. {_TYPE_RULES[question_type]} " + _JSON)


def messages(criterion: str, question_type: str, question: str, reference: str,
             reply: str) -> list[dict[str, str]]:
    """The judge messages of one LLM criterion for one saved answer."""
    system = GENEROUS if criterion == "generous" else per_type_system(question_type)
    user = f"Question: {question}\nReference answer: {reference}\nReply to grade: {reply}\n\nReturn the JSON object."
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
