"""The length reward: shapes, units, bounds, and closer-is-better for every input."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grpo_core
from grpo_core import UsageError
from grpo_reward_length import SHAPES, SPEC, length_reward, text_of_length


@pytest.mark.parametrize("shape, expected", [
    ("linear", [0.0, 0.5, 1.0, 0.5, 0.0]),
    ("reciprocal", [0.2, 1 / 3, 1.0, 1 / 3, 1 / 7]),
    ("exponential", [math.exp(-4), math.exp(-2), 1.0, math.exp(-2), math.exp(-6)]),
])
def test_shapes(shape, expected):
    scores = [length_reward(text_of_length(n), target=20, shape=shape) for n in (0, 10, 20, 30, 50)]
    assert scores == pytest.approx(expected)


@settings(max_examples=300)
@given(st.integers(0, 500), st.integers(0, 600), st.integers(0, 600), st.sampled_from(SHAPES),
       st.none() | st.floats(0.5, 100))
def test_closer_never_scores_lower_and_stays_in_bounds(target, a, b, shape, scale):
    near, far = sorted((a, b), key=lambda n: abs(n - target))
    score_near = length_reward(text_of_length(near), target=target, shape=shape, scale=scale)
    score_far = length_reward(text_of_length(far, seed=1), target=target, shape=shape, scale=scale)
    assert 0.0 <= score_far <= score_near <= 1.0


def test_tokens_are_counted_from_completion_ids():
    (reward,) = grpo_core.load_rewards(["length"], params={"length": {"target": 3, "unit": "tokens"}})
    scores = reward(prompts=["p", "p"], completions=["one long completion", "x"], completion_ids=[[1, 2, 3], [1]])
    assert scores == pytest.approx([1.0, 1 / 3])


def test_tokens_are_scaled_by_the_share_of_characters_that_count():
    (reward,) = grpo_core.load_rewards(["length"], params={"length": {"target": 200, "unit": "tokens"}})
    answer = "The answer is 42."
    texts = [" " * 200, "\n" * 200, "\u200b" * 200, answer + " " * 183, answer * 12]
    scores = reward(prompts=["p"] * 5, completions=texts, completion_ids=[list(range(200))] * 5)
    assert scores[:3] == [0.0, 0.0, 0.0]
    assert scores[3] == pytest.approx(round(200 * 17 / 200) / 200)
    assert scores[4] == pytest.approx(round(200 * 17 / 204) / 200)


def test_tokens_without_ids_stops_with_a_clear_message():
    (reward,) = grpo_core.load_rewards(["length"], params={"length": {"unit": "tokens"}})
    with pytest.raises(grpo_core.RewardError, match="unit=tokens needs completion_ids"):
        reward(prompts=["p"], completions=["abc"])


def test_both_completion_shapes():
    (reward,) = grpo_core.load_rewards(["length"], params={"length": {"target": 4}})
    plain = reward(prompts=["p"] * 2, completions=["abcd", "ab"])
    chat = reward(prompts=["p"] * 2, completions=[[{"role": "assistant", "content": t}] for t in ("abcd", "ab")])
    # "abcd" and "ab" repeat nothing, so each counts in full.
    assert plain == chat == [1.0, 0.5]


@pytest.mark.parametrize("args, message", [
    ({"target": -1}, "target must be 0 or more, got -1"),
    ({"scale": 0}, "scale must be greater than 0, got 0.0"),
    ({"shape": "cubic"}, "must be one of: linear, reciprocal, exponential"),
])
def test_bad_parameters_are_usage_errors(args, message):
    with pytest.raises(UsageError, match=message):
        grpo_core.load_rewards(["length"], params={"length": args})


def test_gold_completion_scores_the_top_bound():
    params = SPEC.resolve({"target": 37})
    assert length_reward(SPEC.checks.gold_example({}, params), **params) == 1.0


def test_a_sentence_repeated_with_one_letter_changed_in_each_copy_counts_about_one_copy():
    near_repeat = " ".join(f"This step restates what was said befor{letter}." for letter in "abcdefghijklmnopqrstuvwxy")
    params = SPEC.resolve({"target": 100})
    assert len(near_repeat) > 1000
    assert length_reward(near_repeat, **params) < 0.5  # it scored 0.66: each changed letter counted as new text
