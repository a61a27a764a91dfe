"""The reasoning-gym dataset: rows, mixing, settings passed to the task, errors that say what to do."""

import json

import pytest

from grpo_core import UsageError, load_dataset

from grpo_reasoning_gym.dataset import counts, generate_rows, make_row, solved_examples
from grpo_reasoning_gym.entries import dump_entry, load_entry


def load(**args):
    return load_dataset("reasoning-gym", args)


def test_rows_carry_what_scoring_needs():
    dataset = load(tasks="chain_sum", size=4)
    assert {"prompt", "answer", "task", "entry"} <= set(dataset.column_names)
    for row in dataset:
        entry = load_entry(row["entry"])
        assert row["task"] == "chain_sum"
        assert entry["answer"] == row["answer"]
        assert row["prompt"][-1] == {"role": "user", "content": entry["question"]}
        assert "<answer></answer>" in row["prompt"][0]["content"]


def test_plain_prompts_and_a_custom_system_prompt():
    rows = generate_rows("chain_sum", 2, 0, system_prompt="Be brief.", chat=False)
    assert all(isinstance(r["prompt"], str) and r["prompt"].startswith("Be brief.\n\n") for r in rows)


def test_few_shot_puts_solved_examples_of_the_rows_own_task_before_the_question():
    dataset = load(tasks="chain_sum,leg_counting", size=8, few_shot=2)
    for row in dataset:
        prompt = row["prompt"]
        assert [m["role"] for m in prompt] == ["system", "user", "assistant", "user", "assistant", "user"]
        question = load_entry(row["entry"])["question"]
        assert prompt[-1]["content"] == question
        for ask, answer in zip(prompt[1:5:2], prompt[2:5:2]):
            assert ask["content"] != question
            assert answer["content"].startswith("<answer>") and answer["content"].endswith("</answer>")
            assert ("legs" in ask["content"]) == (row["task"] == "leg_counting")  # the row's own task
    plain = generate_rows("chain_sum", 2, 0, system_prompt="Be brief.", chat=False, few_shot=1)
    example, answer = solved_examples("chain_sum", {}, 0, 1)[0]
    assert plain[0]["prompt"].startswith(f"Be brief.\n\n{example}\n<answer>{answer}</answer>\n\n")


def test_a_row_never_shows_its_own_question_as_an_example():
    examples = solved_examples("chain_sum", {}, 0, 2)
    own = {"question": examples[0][0], "answer": examples[0][1]}
    shown = make_row("chain_sum", 0, own, None, True, examples)["prompt"]
    asked = [m["content"] for m in shown if m["role"] == "user"]
    assert asked == [examples[1][0], examples[2][0], own["question"]]


def test_the_same_seed_gives_the_same_rows_and_another_seed_others():
    assert generate_rows("chain_sum", 5, 1) == generate_rows("chain_sum", 5, 1)
    assert generate_rows("chain_sum", 5, 1) != generate_rows("chain_sum", 5, 2)


def test_mixing_weights_share_the_rows():
    assert counts({"a": 1.0, "b": 2.0}, 9) == {"a": 3, "b": 6}
    assert sum(counts({"a": 1.0, "b": 1.0, "c": 1.0}, 10).values()) == 10
    rows = generate_rows("chain_sum,leg_counting:2", 30, 0)
    assert sum(r["task"] == "leg_counting" for r in rows) == 20


def test_settings_reach_the_task():
    rows = generate_rows("chain_sum", 10, 0, settings="min_terms=4,max_terms=4")
    assert all(load_entry(r["entry"])["metadata"]["num_terms"] == 4 for r in rows)


def test_a_task_scoped_setting_applies_to_that_task_only():
    rows = generate_rows("chain_sum,products", 10, 0, settings="chain_sum.min_terms=4,chain_sum.max_terms=4")
    assert all(load_entry(r["entry"])["metadata"]["num_terms"] == 4 for r in rows if r["task"] == "chain_sum")


@pytest.mark.parametrize("args, words", [
    ({"tasks": "chain_sun"}, ["unknown reasoning-gym task 'chain_sun'", "did you mean 'chain_sum'"]),
    ({"tasks": "chain_sum:0"}, ["must be a number above 0"]),
    ({"tasks": ""}, ["needs tasks"]),
    ({"settings": "min_term=3"}, ["has no setting 'min_term'", "did you mean 'min_terms'", "max_terms"]),
    ({"settings": "min_terms=many"}, ["min_terms", "many"]),
    ({"settings": "min_terms=5,max_terms=2"}, ["rejects the settings"]),
    ({"settings": "products.min_terms=3"}, ["not selected"]),
    ({"size": 0}, ["size of 1 or more"]),
    ({"few_shot": -1}, ["few_shot", "-1"]),
    ({"tasks": "rush_hour", "few_shot": 1}, ["rush_hour has no gold answers", "drop few_shot"]),
])
def test_bad_parameters_are_usage_errors_naming_the_value(args, words):
    with pytest.raises(UsageError) as error:
        load(**{"size": 3, **args})
    for word in words:
        assert word in str(error.value)


def test_entries_survive_json_intact():
    entry = {"answer": "1", "metadata": {"range": (1, 5), "graph": {3: [(1, 2)]}, "list": [1, "a"]}}
    text = dump_entry(entry)
    assert json.loads(text)  # plain JSON in the column
    assert load_entry(text) == entry
    assert isinstance(load_entry(text)["metadata"]["range"], tuple)


def test_listing_every_task(tmp_path):
    from click.testing import CliRunner

    from grpo_core.testing import grpo_run

    result = CliRunner().invoke(grpo_run, ["reasoning-gym-tasks", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    names = {row["task"] for row in rows}
    assert {"chain_sum", "leg_counting", "gsm_symbolic"} <= names and len(names) > 100
    assert all(row["description"] for row in rows)
    assert next(r for r in rows if r["task"] == "gsm_symbolic")["judged by"] == "number"
    assert next(r for r in rows if r["task"] == "word_sorting")["checker runs in"] == "process"
    assert next(r for r in rows if r["task"] == "polynomial_multiplication")["checker runs in"] == "worker"
