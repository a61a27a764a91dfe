"""The degenerate completions the checks try on ``reasoning-gym``, and the attacks the task scan uses."""

from __future__ import annotations

from grpo_reasoning_gym.entries import load_entry


def format_answer(answer: str, params: dict) -> str:
    if params.get("extract") == "whole":
        return answer
    tag = params.get("tag") or "answer"
    return f"<{tag}>{answer}</{tag}>"


ATTACKS = (("empty", ""), ("x", "x"), ("0", "0"), ("1", "1"), ("True", "True"), ("False", "False"), ("yes", "yes"),
           ("no", "no"))
PADDING = (" zzz", " and more words", "\nzzz 1")


def attack_answers(row: dict) -> list[tuple[str, str]]:
    """(label, answer) for each constant, the copied question and the padded gold that differ from the row's gold.

    A constant equal to the gold up to case, or the same number (``0`` for ``0.0``), is a right answer, not an attack.
    """
    from grpo_core import parse_number, same_number

    gold = str(row["answer"]).strip()
    gold_value = parse_number(gold)

    def differs(answer: str) -> bool:
        value = parse_number(answer) if gold_value is not None else None
        return answer.lower() != gold.lower() and (value is None or not same_number(gold_value, value))

    question = row.get("question") or str(load_entry(row["entry"]).get("question", ""))
    padded = [(f"gold+{pad!r}", gold + pad) for pad in PADDING]  # parse_number reads "1/2 zzz" as 1/2: not asked
    return [(label, answer) for label, answer in [*ATTACKS, ("copied question", question)] if differs(answer)] + padded


def degenerate(prompt: str, columns: dict, params: dict) -> list[tuple[str, str]]:
    """Completions that do not do the task: an empty answer, the question copied, a placeholder."""
    try:
        question = str(load_entry(columns["entry"]).get("question", "")) if columns.get("entry") else ""
    except (ValueError, TypeError):
        question = ""
    question = question or prompt or ""
    return [
        ("empty answer", format_answer("", params)),
        ("copied question", format_answer(question, params)),
        ("placeholder", format_answer("your answer here", params)),
        ("ellipsis", format_answer("...", params)),
    ]
