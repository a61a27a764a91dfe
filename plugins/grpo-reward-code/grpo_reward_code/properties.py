"""What the property checks read for ``code`` (``CHECKS``): task rows, programs that pass more or fewer tests, gold programs
and programs that try to score without solving. Only the checks call these; hypothesis is imported inside."""

from __future__ import annotations

import random

from grpo_core import Direction, RewardChecks

from grpo_reward_code.degenerate import degenerate, fenced
from grpo_reward_code.tasks import FAMILIES, known_solution, make_task, remember_solution

def _task(drawn):
    family, seed = drawn
    task = make_task(random.Random(seed), family)
    tests = task.tests()
    remember_solution(tests, task)
    return task, tests


def _tasks():
    from hypothesis import strategies as st

    return st.tuples(st.integers(0, len(FAMILIES) - 1), st.integers(0, 10_000)).map(_task)


def rows(params: dict):
    """Rows of generated tasks: ``{"tests": [...], "prompt": ...}``."""
    return _tasks().map(lambda pair: {"tests": pair[1], "prompt": pair[0].prompt_text()})


def gold(columns: dict, params: dict) -> str | None:
    """The reference solution of a generated task, else None."""
    tests = columns.get("tests")
    known = known_solution(tests)
    return fenced(known[1], params) if known else None


def wrong_on(task, inputs) -> str:
    """The reference solution, except that it returns a wrong value for the argument tuples in ``inputs``."""
    bad = sorted({repr(tuple(args)) for args in inputs})
    return (f"{task.solution}\n_reference = {task.name}\n\n"
            f"def {task.name}(*args):\n    if repr(args) in {bad!r}:\n        return '(wrong)'\n"
            f"    return _reference(*args)\n")


def more_tests_beat_fewer(params: dict):
    """Pairs (a program failing fewer tests, the same program failing more), the second's failures a superset.
    Under ``strict`` the better one fails none, since then only passing every test pays."""
    from hypothesis import strategies as st

    def pair(drawn):
        (task, tests), cut, extra = drawn
        cases = list(task.cases)  # each test's calls: wrong on one call fails the whole test
        fewer = 0 if params.get("strict") else min(cut, len(cases) - 1)
        more = min(len(cases), fewer + extra)
        wrong = lambda count: [args for case in cases[:count] for args in case]  # noqa: E731
        return (fenced(wrong_on(task, wrong(fewer)), params), fenced(wrong_on(task, wrong(more)), params),
                {"tests": tests})

    return st.tuples(_tasks(), st.integers(0, 4), st.integers(1, 4)).map(pair)


def correct_beats_bug(params: dict):
    """Pairs (the reference solution, the same solution with a bug)."""
    return _tasks().map(lambda pair: (fenced(pair[0].solution, params), fenced(pair[0].buggy, params),
                                      {"tests": pair[1]}))


def row_problems(columns: dict, params: dict) -> list[tuple[str, str]]:
    """A row whose tests cannot be read (no list of asserts or of input/output pairs) cannot be scored."""
    from grpo_reward_code.programs import read_tests

    raw = columns.get("tests")
    if read_tests(raw) is not None:
        return []
    return [("tests cannot be read", str(raw)[:80])]


CHECKS = RewardChecks(
    directions=(
        Direction("a program that passes more tests scores higher", more_tests_beat_fewer, strict=True),
        Direction("a correct program scores higher than the same program with a bug", correct_beats_bug, strict=True),
    ),
    column_strategy=rows,
    gold_example=gold,
    degenerate=degenerate,
    row_problems=row_problems,
)
