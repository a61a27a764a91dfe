"""The plugin as grpo-core sees it: grpo-core's property suite on the math reward, and discovery."""

from grpo_core.testing import get_spec

from grpo_reward_math import SPEC


def test_property_suite(grpo_check):
    grpo_check(SPEC, params={"timeout": 2.0}, max_examples=5, seed=0, vary_params=False)


def test_registered_through_the_entry_point():
    assert get_spec("reward", "math").distribution == "grpo-reward-math"
    for dataset in ("gsm8k", "arithmetic"):
        assert get_spec("dataset", dataset).distribution == "grpo-reward-math"
