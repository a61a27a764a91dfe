"""The held-out prompts of a run's comparison are never trained on, and the comparison shows the change."""

import pytest

from grpo_core.plugins import get_registry
from grpo_core.sample import format_comparison, held_out_rows, question_text


def resolved(name, **args):
    spec = get_registry().dataset(name)
    if spec is None:
        pytest.skip(f"dataset '{name}' is not installed")
    params = spec.resolve(args)
    return spec, params, spec.load(**params)


def test_arithmetic_held_out_questions_come_from_the_test_split_and_are_never_trained_on():
    spec, params, train = resolved("arithmetic", size=2000, difficulty="easy", few_shot=1)
    rows, where = held_out_rows(spec, params, train, 200)
    questions = [question_text(p) for p in rows["prompt"]]
    trained = {m["content"] for prompt in train["prompt"] for m in prompt if m["role"] == "user"}
    assert len(questions) == len(set(questions)) == 200
    assert not set(questions) & trained
    assert "200 distinct test-split questions" in where
    assert rows["prompt"][0][:-1] == train["prompt"][0][:-1]  # same system prompt and worked example as training


def test_a_dataset_without_a_test_split_says_its_held_out_rows_are_trained_on(data_file):
    spec, params, train = resolved("local", path=str(data_file))
    rows, where = held_out_rows(spec, params, train, 3)
    assert list(rows["prompt"]) == list(train["prompt"])[-3:]
    assert "also trained on" in where


def test_question_text_is_the_last_user_turn():
    chat = [{"role": "system", "content": "s"}, {"role": "user", "content": "What is 1 + 1?"},
            {"role": "assistant", "content": "<answer>2</answer>"}, {"role": "user", "content": "What is 2 + 3?"}]
    assert question_text(chat) == "What is 2 + 3?"
    assert question_text("plain prompt") == "plain prompt"


def test_comparison_of_two_models_ends_with_the_change():
    results = [{"model": "base (before)", "means": {"math": 0.2, "xml-format": None}},
               {"model": "final (after)", "means": {"math": 0.45, "xml-format": 0.9}}]
    lines = format_comparison(results).splitlines()
    assert lines[-1].split() == ["change", "+0.250", "-"]
