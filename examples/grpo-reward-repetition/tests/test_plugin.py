"""The repetition reward: grpo-core's property suite, worked examples, and its own properties."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grpo_core import UsageError
from grpo_core.testing import as_chat, call_reward

from grpo_reward_repetition import SPEC, repetition


def test_property_suite(grpo_check):
    grpo_check(SPEC, max_examples=15, seed=0)


def test_examples():
    scores = call_reward(SPEC, [
        "The cat sat on the mat.",                      # 4 word trigrams, all distinct
        "the answer is the answer is the answer is",    # 7 trigrams, 3 distinct
        as_chat("yes yes yes yes yes"),                 # 3 trigrams, 1 distinct
        "too short",                                    # fewer than 3 words
    ])
    assert scores == [1.0, 3 / 7, 1 / 3, 1.0]


def test_parameters():
    assert call_reward(SPEC, ["a a b"], params={"n": 1}) == [2 / 3]
    assert call_reward(SPEC, ["The the THE"], params={"n": 1}) == [1 / 3]
    assert call_reward(SPEC, ["The the THE"], params={"n": 1, "lowercase": False}) == [1.0]
    assert call_reward(SPEC, ["abab"], params={"n": 2, "unit": "chars"}) == [2 / 3]


def test_rejects_n_below_one():
    with pytest.raises(UsageError, match="n must be 1 or more, got 0"):
        SPEC.resolve({"n": 0})


@given(st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), min_size=3, max_size=8, unique=True))
def test_a_loop_scores_lower_the_longer_it_runs(words):
    loop = " ".join(words) + " "
    scores = [repetition(loop * times) for times in range(1, 6)]
    assert scores[0] == 1.0
    assert all(later < earlier for earlier, later in zip(scores, scores[1:]))


@given(st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), min_size=3, unique=True))
def test_distinct_words_score_one(words):
    assert repetition(" ".join(words)) == 1.0


def test_installed_entry_point():
    # After `pip install`, grpo-run finds the reward through the "grpo" entry point (conftest.py loads the
    # installed plugins afresh before each test).
    from grpo_core import load_rewards

    (reward,) = load_rewards(["repetition"], params={"repetition": {"n": 2}})
    assert reward.spec.distribution == "grpo-reward-repetition"
    assert reward(prompts=[""], completions=["a b a b"]) == [2 / 3]
