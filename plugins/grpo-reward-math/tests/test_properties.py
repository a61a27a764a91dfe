"""The plugin's own property declarations hold: directions, rows and gold completions."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpo_reward_math import SPEC, math_reward

PARAMS = [SPEC.resolve({"extract": mode}) for mode in ("auto", "answer-tag", "boxed", "last-number")]
SETTINGS = settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])


def _by_description(word):
    (direction,) = [d for d in SPEC.checks.directions if word in d.description]
    return direction


@pytest.mark.parametrize("params", PARAMS, ids=lambda p: p["extract"])
@pytest.mark.parametrize("word", ["wrong", "no answer"])
def test_directions_hold(params, word):
    direction = _by_description(word)
    assert direction.strict

    @SETTINGS
    @given(direction.pairs(params))
    def check(pair):
        better, worse, columns = pair
        high, low = math_reward([better, worse], [columns["answer"]] * 2, **params)
        assert high is not None and low is not None
        assert high > low, (better, worse, columns)

    check()


@pytest.mark.parametrize("params", PARAMS, ids=lambda p: p["extract"])
def test_gold_completions_score_the_top_bound(params):
    @SETTINGS
    @given(SPEC.checks.column_strategy(params))
    def check(row):
        completion = SPEC.checks.gold_example(row, params)
        if completion is None:
            assert params["extract"] == "last-number"
            return
        assert math_reward([completion], [row["answer"]], **params) == [SPEC.bounds[1]]

    check()


def test_a_reversed_reward_fails_the_direction():
    """The direction is not vacuous: scoring 1 - math would break it on the first example."""
    direction = _by_description("wrong")
    params = PARAMS[0]
    pairs = st.lists(direction.pairs(params), min_size=5, max_size=5)

    @SETTINGS
    @given(pairs)
    def check(drawn):
        better = [b for b, _, _ in drawn]
        worse = [w for _, w, _ in drawn]
        golds = [c["answer"] for _, _, c in drawn]
        flipped_better = [1 - s for s in math_reward(better, golds, **params)]
        flipped_worse = [1 - s for s in math_reward(worse, golds, **params)]
        assert all(b < w for b, w in zip(flipped_better, flipped_worse))

    check()
