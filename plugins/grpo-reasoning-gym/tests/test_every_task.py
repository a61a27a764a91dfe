"""Every reasoning-gym task: the gold answer scores the top, and a corrupted answer never scores above it."""

import pytest

from grpo_reasoning_gym.checks import corruptions, format_answer
from grpo_reasoning_gym.dataset import generate_rows
from grpo_reasoning_gym.reward import reasoning_gym_reward
from grpo_reasoning_gym.tasks import task_names

ITEMS = 3

# Tasks with no single gold answer: the entry's answer is None and the checker verifies a solution itself.
# Tasks where some corruption of the gold still scores 1.0 (reasoning-gym 0.1.25, seed 0): an equivalent
# way to write the same answer (-8.000 for -8.00, a reordered sum, another valid move list) or a checker that
# accepts a wrong one (spell_backward: "suolunips0"; game_of_life_halting: "Tru"; time_intervals: "28 day").
# polynomial_multiplication's checker reads a trailing "!" as a factorial, so "y**2!" equals "y**2".
TIES_WITH_GOLD = {
    "advanced_geometry", "complex_arithmetic", "decimal_arithmetic", "fraction_simplification",
    "game_of_life_halting", "intermediate_integration", "kakurasu", "knights_knaves", "polynomial_equations",
    "polynomial_multiplication", "pool_matrix", "power_function", "puzzle24", "quantum_lock", "simple_integration", "sokoban",
    "spell_backward", "time_intervals",
}
NO_GOLD = {"boxnet", "graph_color", "propositional_logic", "rubiks_cube", "rush_hour"}


@pytest.mark.parametrize("task", task_names())
def test_gold_tops_and_corruptions_do_not_beat_it(task):
    rows = generate_rows(task, ITEMS, seed=0, system_prompt=None, chat=False)
    for row in rows:
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
