"""The plugin as grpo-core sees it: grpo-core's property suite on the length reward, in both units, and discovery."""

import pytest

from grpo_core.testing import get_spec

from grpo_reward_length import SPEC


@pytest.mark.parametrize("params, examples", [({}, 20), ({"unit": "tokens"}, 10)], ids=["chars", "tokens"])
def test_property_suite(grpo_check, params, examples):
    grpo_check(SPEC, params=params, max_examples=examples)


def test_registered_through_the_entry_point():
    assert get_spec("reward", "length").distribution == "grpo-reward-length"
