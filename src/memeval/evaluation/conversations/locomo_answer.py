"""LoCoMo's shared answer prompt, by version (`protocol.answer_prompt_version`).

Version 1 gave its date example inside the instructions ("for example 'the week before 9 June
2023'"), and small models read it as content: 15 of the 105 answers of the shipped GSW LoCoMo
run (results/locomo-local) were that example word for word, whatever the question asked, and
other methods' runs copied it too. Version 2 states the rule alone and shows it worked once, in
a user/assistant exchange of its own about an invented conversation before the real question
(as SEEM's extraction prompt gives its example), so the example is something said about other
people, not a value in the instructions. Each version's example answer is declared
(`EXAMPLES`) so `memeval health` can count answers that copy the prompt of their own run.
Runs configured before version 2 replay with version 1 (evaluation/runs/upgrade.py).
"""

from __future__ import annotations

from memeval.datasets.locomo import NOT_MENTIONED

from .behaviour import AnswerPrompt

ANSWER_PROMPTS = {1: "locomo-answer-v1", 2: "locomo-answer-v2"}
ANSWER_PROMPT_VERSIONS = tuple(ANSWER_PROMPTS)

_SYSTEM_V1 = (
    "You answer questions about a long conversation between two people, using only the "
    "conversation sessions provided. Each session is headed by the date and time it took place. "
    "Reply with a short phrase of a few words, not a sentence. When the question asks when "
    "something happened, work out an absolute date or period from the session date (for "
    "example 'the week before 9 June 2023'), never a relative word such as 'yesterday'. If the "
    f"sessions do not contain the answer, reply exactly: {NOT_MENTIONED}."
)

_SYSTEM_V2 = (
    "You answer questions about a long conversation between two people, using only the "
    "conversation sessions provided. Each session is headed by the date and time it took place. "
    "Reply with a short phrase of a few words, not a sentence. When the question asks when "
    "something happened, work out an absolute date or period from the date of the session that "
    "mentions it, never a relative word such as 'yesterday'. If the sessions do not contain the "
    f"answer, reply exactly: {NOT_MENTIONED}."
)

# Version 2's worked example: invented people, place and dates, none from the benchmark.
_EXAMPLE_SESSIONS = (
    "### Session 1 (10:15 am on 3 April, 2019)\n"
    "Tomasz: Morning Wren! Two days ago I finally fixed the old rowing boat.\n\n"
    "Wren: Nice work! Will you take it out on Lake Ormsby?\n\n"
    "Tomasz: This weekend, if the wind drops."
)
_EXAMPLE_QUESTION = "When did Tomasz fix the rowing boat?"
_EXAMPLE_ANSWER = "1 April 2019"

EXAMPLES = {1: ("the week before 9 June 2023",), 2: (_EXAMPLE_ANSWER,)}


def _user(context_text: str, question: str) -> str:
    return f"Conversation sessions:\n{context_text}\n\nQuestion: {question}\nShort answer:"


def answer_messages(prompt: AnswerPrompt | int, context_text: str, question: str) -> list[dict[str, str]]:
    """The messages of answer `prompt` (behaviour.py; an unknown version raises UnknownVersion):
    instructions, (from version 2: the example exchange), then the method's context and the question."""
    if not AnswerPrompt.of(prompt).example_in_own_turn:
        return [{"role": "system", "content": _SYSTEM_V1}, {"role": "user", "content": _user(context_text, question)}]
    return [{"role": "system", "content": _SYSTEM_V2},
            {"role": "user", "content": _user(_EXAMPLE_SESSIONS, _EXAMPLE_QUESTION)},
            {"role": "assistant", "content": _EXAMPLE_ANSWER},
            {"role": "user", "content": _user(context_text, question)}]
