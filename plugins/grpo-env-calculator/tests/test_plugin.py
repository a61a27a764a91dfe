"""The plugin as grpo-core sees it: discovery, and grpo-core's environment checks on the calculator's episodes
(the same as `grpo-run check --env calculator --dataset products`) passing, and failing for a broken copy."""

from dataclasses import replace

import pytest

from grpo_core import load_dataset
from grpo_core.testing import check_environment, get_spec

from grpo_env_calculator import ENVIRONMENT, Calculator


@pytest.fixture(scope="module")
def products():
    return load_dataset("products", {"size": 20})


def test_registered_through_the_entry_point():
    assert get_spec("environment", "calculator").distribution == "grpo-env-calculator"
    assert get_spec("dataset", "products").distribution == "grpo-env-calculator"
    assert ENVIRONMENT.tool_names() == ["add", "divide", "multiply", "subtract"]


@pytest.mark.parametrize("seed", range(10))
def test_the_environment_checks_pass(products, seed):
    report = check_environment("calculator", products, seed=seed, max_examples=10)
    assert report.ok, [failure.to_dict() for failure in report.failures]
    assert not report.unchecked(), report.unchecked()  # the gold episode is checked too


def test_the_checks_pass_with_a_small_budget(products):
    report = check_environment("calculator", products, params={"max_calls": 1}, seed=0, max_examples=5)
    assert report.ok, [failure.to_dict() for failure in report.failures]


class PaysEveryEpisode(Calculator):
    """The calculator with the bug the checks exist for: an episode that does nothing is paid."""

    def get_reward(self) -> float:
        return 1.0


def test_a_copy_that_pays_every_episode_fails_do_nothing(products):
    broken = replace(ENVIRONMENT, name="calculator-broken", factory=PaysEveryEpisode)
    report = check_environment(broken, products, seed=0, max_examples=5)
    assert not report.ok
    assert "do-nothing" in report.failed("calculator-broken")
