"""The plugin as grpo-core sees it: grpo-core's property suite on the code reward (in the sandbox), and discovery."""

from grpo_core.testing import get_spec

from grpo_reward_code import SPEC


def test_property_suite(grpo_check, isolated):
    grpo_check(SPEC, max_examples=5, seed=0)


def test_registered_through_the_entry_point():
    assert get_spec("reward", "code").distribution == "grpo-reward-code"
    for dataset in ("code-tasks", "code-hub"):
        assert get_spec("dataset", dataset).distribution == "grpo-reward-code"
