"""The reasoning-gym reward: strict and graded scores, exact numbers, answer extraction, property checks."""

import pytest

from grpo_core import load_rewards
from grpo_core.testing import check_reward

from grpo_reasoning_gym import SPEC, reasoning_gym_reward
from grpo_reasoning_gym.dataset import generate_rows
from grpo_reasoning_gym.reward import checker


def row(task, index=0, seed=0):
    generated = generate_rows(task, index + 1, seed)[index]
    return {"answer": generated["answer"], "task": task, "entry": generated["entry"]}


def score(text, columns, **params):
    return reasoning_gym_reward(text, **columns, **params)


def test_a_negated_number_is_wrong_though_the_checker_accepts_it():
    columns = row("gsm_symbolic")
    gold = columns["answer"]
    assert int(gold) > 0
    wrong = f"-{gold}"
    from grpo_reasoning_gym.entries import load_entry

    assert checker("gsm_symbolic")(wrong, load_entry(columns["entry"])) == 1.0  # the checker's own verdict
    assert score(f"<answer>{wrong}</answer>", columns) == 0.0
    assert score(f"<answer>{wrong}</answer>", columns, strict=False) == 1.0  # graded trusts the checker


def test_a_grouped_number_equals_the_plain_gold():
    columns = next(c for c in (row("products", i) for i in range(20)) if int(c["answer"]) >= 1000)
    grouped = f"{int(columns['answer']):,}"
    assert "," in grouped
    assert score(f"<answer>{grouped}</answer>", columns) == 1.0
    assert score(f"<answer>{int(columns['answer']) + 1:,}</answer>", columns) == 0.0


def test_the_issue_cases_for_the_number_comparison():
    entry_70 = {**row("gsm_symbolic"), "answer": "70"}
    assert score("<answer>-70</answer>", entry_70) == 0.0
    assert score("<answer>70</answer>", entry_70) == 1.0
    entry_2744 = {**row("products"), "answer": "2744"}
    assert score("<answer>2,744</answer>", entry_2744) == 1.0


def test_graded_pays_partial_credit_for_a_wrong_answer_where_strict_pays_nothing():
    columns = row("power_function")
    assert score("<answer>12345</answer>", columns) == 0.0
    graded = score("<answer>12345</answer>", columns, strict=False)
    assert 0.0 < graded < 1.0


def test_a_checker_task_scores_its_gold_and_rejects_another_answer():
    columns = row("spell_backward")
    assert score(f"<answer>{columns['answer']}</answer>", columns) == 1.0
    assert score(f"<answer>{columns['answer']}x</answer>", columns) == 0.0


def test_extraction_tag_chat_and_whole():
    columns = row("chain_sum")
    right = f"Adding up.\n<answer> {columns['answer']} </answer>"
    assert score(right, columns) == 1.0
    assert score([{"role": "assistant", "content": right}], columns) == 1.0
    assert score(columns["answer"], columns) == 0.0  # no tag
    assert score(columns["answer"], columns, extract="whole") == 1.0
    assert score(f"<final>{columns['answer']}</final>", columns, tag="final") == 1.0


def test_unjudgeable_rows_give_none():
    columns = row("chain_sum")
    assert score("<answer>1</answer>", {**columns, "entry": "not json"}) is None
    assert score("<answer>1</answer>", {**columns, "task": "no_such_task"}) is None


def test_through_the_adapter_in_worker_processes():
    (reward,) = load_rewards(["reasoning-gym"])
    columns = [row("chain_sum", i) for i in range(3)]
    completions = [f"<answer>{c['answer']}</answer>" for c in columns[:2]] + ["<answer>nope</answer>"]
    scores = reward(prompts=[""] * 3, completions=completions, **{k: [c[k] for c in columns] for k in columns[0]})
    assert scores == [1.0, 1.0, 0.0]


@pytest.mark.parametrize("params", [{}, {"strict": False}])
def test_property_checks_pass(params):
    check_reward(SPEC, params=params, max_examples=15, seed=0)


@pytest.mark.parametrize("task", ["chain_sum", "leg_counting", "word_sorting", "coin_flip"])
def test_property_checks_pass_on_a_task_s_rows(task):
    rows = [row(task, i) for i in range(4)]
    check_reward(SPEC, max_examples=10, seed=0, rows=rows, vary_params=False)


def test_degenerate_completions_score_nothing():
    for task in ("chain_sum", "spell_backward", "word_sorting"):
        columns = row(task)
        for label, completion in SPEC.checks.degenerate("", columns, {}) if SPEC.checks.degenerate else []:
            assert score(completion, columns) == 0.0, (task, label)
