"""What the property checks draw for ``reasoning-gym``: generated rows, gold and corrupted answers.

Only called by the checks; reasoning_gym and hypothesis are imported inside the functions.
"""

from __future__ import annotations

from functools import lru_cache

from grpo_core import Direction, RewardChecks

from grpo_reasoning_gym.degenerate import degenerate, format_answer
from grpo_reasoning_gym.entries import load_entry
from grpo_reasoning_gym.reward import NUMBER_TASKS, uses_numbers

# Tasks the checks draw rows from: number tasks and checker tasks of several kinds.
CHECK_TASKS = ("chain_sum", "gsm_symbolic", "coin_flip", "leg_counting", "products", "basic_arithmetic",
               "caesar_cipher", "word_sorting", "letter_jumble", "number_sorting", "dice")
ROWS_PER_TASK = 6


@lru_cache(maxsize=None)
def generated_rows(tasks: tuple[str, ...] = CHECK_TASKS, per_task: int = ROWS_PER_TASK, seed: int = 0) -> tuple:
    """Rows (``answer``, ``task``, ``entry``, ``question``) from each task's generator."""
    import random

    from grpo_reasoning_gym.dataset import generate_rows

    rows = []
    # Some generators move the global random state; hypothesis warns when a strategy does, so it is put back.
    state = random.getstate()
    try:
        for task in tasks:
            for row in generate_rows(task, per_task, seed, chat=False, system_prompt=None):
                rows.append({"answer": row["answer"], "task": task, "entry": row["entry"], "question": row["prompt"]})
    finally:
        random.setstate(state)
    return tuple(rows)


def rows(params: dict):
    """Rows of the reward's columns from generated items of several tasks."""
    from hypothesis import strategies as st

    return st.sampled_from(generated_rows()).map(lambda row: {k: row[k] for k in ("answer", "task", "entry")})


def gold(columns: dict, params: dict) -> str | None:
    """The gold answer where the reward reads it; None for tasks without one gold answer (e.g. puzzles)."""
    answer = columns.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        return None
    return format_answer(answer.strip(), params)


def corruptions(row: dict) -> list[str]:
    """Wrong answers for a row: another item's gold of the same task, and the gold changed by one character."""
    from grpo_core import parse_number, same_number

    gold_text = str(row["answer"]).strip()
    numeric = uses_numbers(row["task"], gold_text)
    candidates = [gold_text + "0", gold_text[:-1], gold_text[::-1], "-" + gold_text if numeric else gold_text + "!"]
    if numeric:
        gold_value = parse_number(gold_text)
        candidates = [c for c in candidates if (v := parse_number(c)) is None or not same_number(gold_value, v)]
    return [c for c in candidates if c.strip() and c.strip() != gold_text]


# Answers that do not do the task: constants, and the gold answer with text after it.
def _pairs(params: dict, absent: bool):
    from hypothesis import strategies as st

    def build(drawn):
        row, choice = drawn
        columns = {k: row[k] for k in ("answer", "task", "entry")}
        right = format_answer(row["answer"].strip(), params)
        if absent:
            return right, "I am not sure.", columns
        wrong = corruptions(row)
        return right, format_answer(wrong[choice % len(wrong)], params), columns

    # Graded scoring (strict=false) passes a number task's checker score through, and some checkers accept
    # a rounded or negated value: those pairs are drawn only from tasks whose checker refuses every corruption.
    exact = params.get("strict", True)
    usable = [row for row in generated_rows() if (exact and row["task"] in NUMBER_TASKS) or row["task"] in SAFE_CORRUPTIONS]
    return st.tuples(st.sampled_from(usable), st.integers(0, 7)).map(build)


# Checker tasks whose checker gives 0 to each of corruptions(); the checks draw right/wrong pairs from these.
SAFE_CORRUPTIONS = ("word_sorting", "caesar_cipher", "letter_jumble", "number_sorting")


def right_beats_wrong(params: dict):
    """Pairs (gold answer, the gold answer corrupted) for the same row."""
    return _pairs(params, absent=False)


def right_beats_absent(params: dict):
    """Pairs (gold answer, no answer at all) for the same row."""
    return _pairs(params, absent=True)


def row_problems(columns: dict, params: dict) -> list[tuple[str, str]]:
    """What makes a row unfit: an unknown task, an unreadable entry, no gold answer to train towards."""
    from grpo_reasoning_gym.tasks import task_names

    task, entry, answer = columns.get("task"), columns.get("entry"), columns.get("answer")
    if not isinstance(task, str) or task not in task_names():
        return [("the task is not one this reasoning-gym version has", repr(task))]
    try:
        record = load_entry(entry) if isinstance(entry, str) else None
    except ValueError:
        record = None
    if not isinstance(record, dict):
        return [("the entry column is not a reasoning-gym entry as JSON", repr(entry)[:60])]
    if task in NUMBER_TASKS and answer and not uses_numbers(task, answer):
        return [("the gold answer of a number task is not a number, so the task's checker judges it", repr(answer))]
    return []


CHECKS = RewardChecks(
    directions=(
        Direction("the right answer scores higher than a corrupted one", right_beats_wrong, strict=True),
        Direction("the right answer scores higher than no answer", right_beats_absent, strict=True),
    ),
    column_strategy=rows,
    gold_example=gold,
    degenerate=degenerate,
    row_problems=row_problems,
)
