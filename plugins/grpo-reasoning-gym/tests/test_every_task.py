"""Every reasoning-gym task: the gold answer scores the top, a corrupted answer never scores above it, and no
constant, copied question or gold answer with words after it scores 1.0."""

from functools import lru_cache

import pytest

from grpo_reasoning_gym import reasoning_gym_rewards
from grpo_reasoning_gym.degenerate import attack_answers, format_answer
from grpo_reasoning_gym.properties import corruptions
from grpo_reasoning_gym.dataset import generate_rows
from grpo_reasoning_gym.reward import reasoning_gym_reward
from grpo_reasoning_gym.tasks import task_names

ITEMS = 3

# Tasks where some corruption of the gold still scores 1.0 (reasoning-gym 0.1.25, seed 0): an equivalent
# way to write the same answer (-8.000 for -8.00, a reordered sum, another button sequence, a dropped closing
# "$" or period) or a checker that accepts a wrong one (advanced_geometry: "132.51°0"; pool_matrix: 5.2 for 5.25;
# time_intervals: "28 day").
# The integration checkers read "+ C0" and "+ C!" as another constant; polynomial_multiplication reads a
# trailing "!" as a factorial, so "y**2!" equals "y**2".
TIES_WITH_GOLD = {
    "advanced_geometry", "complex_arithmetic", "decimal_arithmetic", "fraction_simplification",
    "intermediate_integration", "knights_knaves", "polynomial_equations", "polynomial_multiplication",
    "pool_matrix", "power_function", "puzzle24", "quantum_lock", "simple_integration", "time_intervals",
}
# Tasks with no single gold answer: the entry's answer is None and the checker verifies a solution itself.
NO_GOLD = {"boxnet", "graph_color", "propositional_logic", "rubiks_cube", "rush_hour"}


@lru_cache(maxsize=None)
def rows_of(task):
    return tuple(generate_rows(task, ITEMS, seed=0, system_prompt=None, chat=False))


@pytest.mark.parametrize("task", task_names())
def test_gold_tops_and_corruptions_do_not_beat_it(task):
    for row in rows_of(task):
        columns = {"answer": row["answer"], "task": task, "entry": row["entry"]}
        if not row["answer"].strip():
            assert task in NO_GOLD, f"{task} has an item without a gold answer"
            continue
        gold = reasoning_gym_reward(format_answer(row["answer"].strip(), {}), **columns)
        assert gold == 1.0, f"{task}: the gold answer {row['answer']!r} scored {gold}"
        for wrong in corruptions(row):
            score = reasoning_gym_reward(format_answer(wrong, {}), **columns)
            assert score <= gold, f"{task}: the corrupted answer {wrong!r} scored {score} above the gold"
            if task not in TIES_WITH_GOLD:
                assert score < gold, f"{task}: the corrupted answer {wrong!r} scored as much as the gold"


@pytest.mark.parametrize("task", task_names())
def test_constants_the_copied_question_and_a_padded_gold_never_score_one(task):
    for row in rows_of(task):
        if not row["answer"].strip():
            continue
        attacks = attack_answers(row)
        n = len(attacks)
        scores = reasoning_gym_rewards([format_answer(answer, {}) for _, answer in attacks], [row["answer"]] * n,
                                       [task] * n, [row["entry"]] * n)
        paid = [(label, answer[:60]) for (label, answer), score in zip(attacks, scores) if score == 1.0]
        assert not paid, f"{task}: gold {row['answer'][:60]!r}, paid 1.0: {paid}"
