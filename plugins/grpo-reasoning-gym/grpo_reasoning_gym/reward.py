"""The ``reasoning-gym`` reward: is the answer in the completion right for the row's task?

Where a task's answer is a number (``NUMBER_TASKS``), the answer is compared with grpo-core's
exact number comparison (``grpo_core.parse_number`` and ``same_number``): ``2,744`` equals
``2744`` and ``-70`` does not equal ``70``, which several task checkers get wrong. Every other
task is judged by its own checker (``score_answer``). Strict scoring (the default) gives 1.0 only
to a right answer and 0.0 otherwise; graded scoring passes the checker's partial credit through.
"""

from __future__ import annotations

from functools import lru_cache

from grpo_core import answer_tag, completion_text, parse_number, same_number

from grpo_reasoning_gym.entries import load_entry

# Tasks whose gold answer is one exact number, where any equal number is right. Left out on purpose:
# power_function and decimal_arithmetic (rounded answers; their checkers compare at the asked precision),
# dice and fraction_simplification (the answer must be a reduced fraction), base_conversion (digits in a base),
# prime_factorization and polynomial_equations (several numbers).
NUMBER_TASKS = frozenset({
    "aiw", "basic_arithmetic", "binary_alternation", "chain_sum", "circuit_logic", "coin_flip", "count_bits",
    "count_primes", "decimal_chain_sum", "gcd", "gsm_symbolic", "largest_island", "lcm", "leg_counting",
    "letter_counting", "maze", "number_format", "number_sequence", "products", "rectangle_count",
    "rotten_oranges", "self_reference", "simple_equations", "simple_geometry",
})

EXTRACT_MODES = ("answer-tag", "whole")
MAX_ANSWER = 100_000  # characters; a longer answer is not an answer, and some checkers are slow on it


def extract_answer(completion, tag: str = "answer", extract: str = "answer-tag") -> str | None:
    """The answer a completion gives: inside the last ``<tag>`` pair, or the whole text with ``extract=whole``."""
    text = completion_text(completion)
    span = answer_tag(text, tag) if extract == "answer-tag" else text
    if span is None:
        return None
    span = span.strip()
    return span if span and len(span) <= MAX_ANSWER else None


@lru_cache(maxsize=None)
def checker(task: str):
    """The task's ``score_answer`` (one generator per task and process, built with its default config)."""
    from reasoning_gym.factory import get_score_answer_fn

    return get_score_answer_fn(task)


def uses_numbers(task: str, answer) -> bool:
    """Whether this row is judged by exact number comparison (a number task whose gold answer is a number)."""
    return task in NUMBER_TASKS and parse_number(str(answer)) is not None


def reasoning_gym_reward(completion, answer, task, entry, *, strict=True, tag="answer", extract="answer-tag"):
    """1.0 for a right answer, else 0.0 (``strict``); with ``strict=False`` the task checker's score in [0, 1].

    Returns None when the row cannot be judged (an unknown task or an unreadable entry).
    """
    try:
        record = load_entry(entry) if isinstance(entry, str) else entry
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(task, str):
        return None
    prediction = extract_answer(completion, tag, extract)
    if prediction is None:
        return 0.0
    if uses_numbers(task, answer):
        value = parse_number(prediction)
        if value is not None and same_number(parse_number(str(answer)), value):
            return 1.0
        if strict:
            return 0.0
    try:
        score_answer = checker(task)
    except ValueError:  # a task this reasoning-gym version does not have
        return None
    try:
        score = float(score_answer(prediction, record))
    except Exception:  # checkers raise on answers they cannot read: such an answer is wrong
        return 0.0
    if score != score:
        return 0.0
    if strict:
        return 1.0 if score >= 1.0 else 0.0
    return min(1.0, max(0.0, score))
