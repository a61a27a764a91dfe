"""The plugin as grpo-core sees it: grpo-core's property suite on the reward, strict and graded, and discovery."""

import pytest

from grpo_core.testing import get_spec

from grpo_reasoning_gym import SPEC


@pytest.mark.parametrize("params", [{}, {"strict": False}], ids=["strict", "graded"])
def test_property_suite(grpo_check, params):
    grpo_check(SPEC, params=params, max_examples=15, seed=0)


def test_registered_through_the_entry_point():
    assert get_spec("reward", "reasoning-gym").distribution == "grpo-reasoning-gym"
    assert get_spec("dataset", "reasoning-gym").distribution == "grpo-reasoning-gym"
