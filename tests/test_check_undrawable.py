"""A property whose examples cannot be drawn says so in words, not as hypothesis' Unsatisfiable."""

import pytest
from hypothesis import strategies as st

from grpo_core import Direction, RewardChecks, RewardSpec
from grpo_core.testing import check_reward


def constant(completion, **_):
    return 1.0


def pairs_the_reward_tells_apart(params):
    drawn = st.text(max_size=5).filter(lambda text: constant(text) == 0.0)  # never: the reward is constant
    return drawn.map(lambda text: ("The answer is 7.", text, {}))


def test_a_direction_whose_pairs_cannot_be_drawn_fails_with_a_plain_verdict():
    spec = RewardSpec("constant", "always 1", constant, checks=RewardChecks(
        directions=(Direction("the answer beats no answer", pairs_the_reward_tells_apart, strict=True),)))
    with pytest.raises(AssertionError) as failed:
        check_reward(spec, max_examples=10, seed=0)
    report = str(failed.value)
    assert "no example could be drawn: the strategy's filter or assume() refused every one tried" in report
    assert "Unsatisfiable" not in report and "test cases failed" not in report
