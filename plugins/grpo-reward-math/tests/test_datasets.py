"""The gsm8k and arithmetic datasets, loaded through the registry as grpo-run loads them."""

import json
import operator
import re
from pathlib import Path

import pytest

GSM8K_FILE = Path(__file__).parent / "fixtures" / "gsm8k_sample.jsonl"


def load(name, **args):
    from grpo_core import load_dataset

    return load_dataset(name, args)


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _check_shape(dataset, system_prompt=None):
    assert {"prompt", "answer"} <= set(dataset.column_names)
    for row in dataset:
        roles = [m["role"] for m in row["prompt"]]
        assert roles[-1] == "user" and row["prompt"][-1]["content"]
        if system_prompt is not None:
            assert row["prompt"][0] == {"role": "system", "content": system_prompt}
        assert isinstance(row["answer"], str)


def test_gsm8k_from_a_local_jsonl_file():
    dataset = load("gsm8k", path=str(GSM8K_FILE))
    source = _rows(GSM8K_FILE)
    assert len(dataset) == len(source)
    _check_shape(dataset)
    assert dataset["answer"] == ["72", "10", "1200", "-2", "62.5"]
    assert [row["prompt"][-1]["content"] for row in dataset] == [r["question"] for r in source]
    assert "<answer>" in dataset[0]["prompt"][0]["content"]


def test_gsm8k_from_a_local_parquet_file(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = _rows(GSM8K_FILE)
    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(source), path)
    dataset = load("gsm8k", path=str(path), split="test", size=3, system_prompt="Be brief.")
    _check_shape(dataset, "Be brief.")
    assert dataset["answer"] == ["72", "10", "1200"]


def test_gsm8k_rows_score_with_the_math_reward():
    from grpo_core import load_rewards

    dataset = load("gsm8k", path=str(GSM8K_FILE))
    (reward,) = load_rewards(["math"])
    completions = [f"Let me think.\n<answer>{a}</answer>" for a in dataset["answer"]]
    assert reward.score(prompts=dataset["prompt"], completions=completions, answer=dataset["answer"]) == [1.0] * len(dataset)


def test_gsm8k_file_errors_name_the_problem(tmp_path):
    from grpo_core import UsageError

    with pytest.raises(UsageError, match="does not exist"):
        load("gsm8k", path=str(tmp_path / "missing.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"problem": "1+1", "solution": "2"}) + "\n")
    with pytest.raises(UsageError, match="question"):
        load("gsm8k", path=str(bad))


_OPS = {"+": operator.add, "-": operator.sub, "×": operator.mul, "÷": operator.floordiv}
_BINARY = re.compile(r"What is (\d+) ([-+×÷]) (\d+)\?")


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_arithmetic_is_seeded_exact_and_shaped(difficulty):
    dataset = load("arithmetic", size=200, difficulty=difficulty, seed=3)
    assert len(dataset) == 200
    _check_shape(dataset)
    assert dataset["answer"] == load("arithmetic", size=200, difficulty=difficulty, seed=3)["answer"]
    assert dataset["prompt"] != load("arithmetic", size=200, difficulty=difficulty, seed=4)["prompt"]
    for row in dataset:
        assert re.fullmatch(r"-?\d+", row["answer"]), row
        assert int(row["answer"]) >= 0
        match = _BINARY.fullmatch(row["prompt"][-1]["content"])
        if match:
            a, op, b = int(match[1]), match[2], int(match[3])
            if op == "÷":
                assert a % b == 0
            assert _OPS[op](a, b) == int(row["answer"])


def test_easy_arithmetic_is_single_step_small_addition_and_subtraction():
    dataset = load("arithmetic", size=300)
    for row in dataset:
        match = _BINARY.fullmatch(row["prompt"][-1]["content"])
        assert match, row
        assert match[2] in "+-" and int(match[1]) <= 20 and int(match[3]) <= 20


def test_harder_levels_include_word_problems_and_all_operations():
    medium = [r["prompt"][-1]["content"] for r in load("arithmetic", size=300, difficulty="medium")]
    assert {op for q in medium for op in "+-×÷" if f" {op} " in q} == set("+-×÷")
    assert any("How many" in q for q in medium)
    hard = [r["prompt"][-1]["content"] for r in load("arithmetic", size=300, difficulty="hard")]
    assert any(q.count("How many") == 1 and "Then" in q for q in hard)
    assert not any(_BINARY.fullmatch(q) for q in hard)


def test_arithmetic_splits_differ_and_system_prompt_is_a_parameter():
    train = load("arithmetic", size=50, split="train")
    test = load("arithmetic", size=50, split="test", system_prompt="Just the number.")
    assert train["prompt"][0][0]["content"].startswith("Answer with the final number")
    assert test["prompt"][0][0] == {"role": "system", "content": "Just the number."}
    assert [p[-1] for p in train["prompt"]] != [p[-1] for p in test["prompt"]]


@pytest.mark.parametrize("difficulty", ["easy", "medium"])
def test_no_test_question_is_in_the_training_prompts(difficulty):
    """Easy questions repeat (about 600 exist), so the splits must not share any question text."""
    def texts(dataset):
        return {m["content"] for prompt in dataset["prompt"] for m in prompt if m["role"] == "user"}

    train = load("arithmetic", size=3000, difficulty=difficulty, few_shot=2)
    test = load("arithmetic", size=1000, split="test", difficulty=difficulty, few_shot=2)
    questions = {p[-1]["content"] for p in test["prompt"]}
    assert not questions & texts(train)  # neither a training question nor a worked example
    assert difficulty != "easy" or len(questions) >= 200  # enough distinct ones for a 200-prompt comparison


def test_few_shot_turns_are_right_answers_the_reward_accepts():
    """Each worked example before the question is itself a correct completion for its question."""
    import re

    from grpo_reward_math import math_reward

    prompt = load("arithmetic", size=1, few_shot=3)["prompt"][0]
    assert [m["role"] for m in prompt] == ["system", "user", "assistant"] * 1 + ["user", "assistant"] * 2 + ["user"]
    for question, reply in zip(prompt[1:-1:2], prompt[2:-1:2]):
        a, op, b = re.fullmatch(r"What is (\d+) ([+-]) (\d+)\?", question["content"]).groups()
        value = int(a) + int(b) if op == "+" else int(a) - int(b)
        assert math_reward([reply["content"]], [str(value)]) == [1.0]


def test_no_few_shot_leaves_system_and_question():
    prompt = load("arithmetic", size=1, few_shot=0)["prompt"][0]
    assert [m["role"] for m in prompt] == ["system", "user"]


def test_arithmetic_rejects_bad_arguments():
    from grpo_core import UsageError

    with pytest.raises(UsageError, match="size"):
        load("arithmetic", size=0)
    with pytest.raises(UsageError, match="difficulty"):
        load("arithmetic", difficulty="insane")


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_worked_examples_show_a_right_calculation_and_change_nothing_else(difficulty):
    plain = load("arithmetic", size=40, difficulty=difficulty, few_shot=8)
    worked = load("arithmetic", size=40, difficulty=difficulty, few_shot=8, worked=True)
    assert [r["prompt"][-1] for r in plain] == [r["prompt"][-1] for r in worked]
    assert plain["answer"] == worked["answer"]
    for shown in worked[0]["prompt"][2:-1:2]:
        work, tagged = shown["content"].split("\n")
        value = tagged.removeprefix("<answer>").removesuffix("</answer>")
        steps = work.replace("×", "*").replace("÷", "/").split(" = ")
        assert len(steps) >= 2 and steps[-1] == value
        assert all(eval(step) == int(value) for step in steps)  # every step of the calculation is right
