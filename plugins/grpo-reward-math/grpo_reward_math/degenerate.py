"""The degenerate completions the checks try on ``math``: the question, its expressions or numbers, placeholders."""

from __future__ import annotations

import re

from grpo_reward_math.forms import question_text


def format_answer(answer: str, params: dict) -> str:
    """``answer`` written where the reward reads it under ``params`` (tag, box or final number)."""
    extract = params.get("extract", "auto")
    if extract == "boxed":
        return f"The final answer is $\\boxed{{{answer}}}$."
    if extract == "last-number":
        return f"The answer is {answer}"
    tag = params.get("tag") or "answer"
    return f"<{tag}>{answer}</{tag}>"


_WHAT_IS = re.compile(r"What is (.+?)\?")
_PROMPT_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")
_EXPRESSION = re.compile(r"\d[\d\s.]*(?:[-+*/×÷x^]\s*\(?\s*\d[\d\s.]*\)?\s*)+")


def degenerate(prompt, columns: dict, params: dict) -> list[tuple[str, str]]:
    """Completions that do not answer the row: the question or its expressions copied, its numbers, placeholders."""
    from grpo_core import parse_number, same_number

    from grpo_reward_math.reward import read_gold

    question = question_text(prompt)
    gold = read_gold(columns.get("answer"))

    def not_the_answer(text: str) -> bool:
        number = parse_number(text)
        return not (number is not None and hasattr(gold, "key") and same_number(gold, number))

    found: list[tuple[str, str]] = []
    copied = _WHAT_IS.search(question)
    if copied and not_the_answer(copied.group(1)):
        found.append(("the question copied as the answer", format_answer(copied.group(1).strip(), params)))
    for expression in dict.fromkeys(m.group(0).strip() for m in _EXPRESSION.finditer(question)):
        if not_the_answer(expression):
            found.append((f"the prompt's expression {expression!r}", format_answer(expression, params)))
    numbers = [n for n in dict.fromkeys(_PROMPT_NUMBER.findall(question)) if not_the_answer(n)][:6]
    for number in numbers:
        found.append((f"the prompt's number {number}", format_answer(number, params)))
    if len(numbers) > 1 and not_the_answer(" ".join(numbers)):
        found.append(("the prompt's numbers sprayed", format_answer(" ".join(numbers), params)))
    tag = params.get("tag") or "answer"
    for label, content in (("an empty answer", ""), ("a placeholder answer", "..."), ("a placeholder answer", "N"),
                           ("a placeholder answer", "?"), ("a placeholder answer", "answer")):
        found.append((label, f"<reasoning>.</reasoning>\n<{tag}>{content}</{tag}>"))
    found.append(("the whole question copied", question[:2000]))
    return found
