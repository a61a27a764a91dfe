"""The plugin as grpo-core sees it: discovery, and grpo-core's environment checks on retry's episodes (the same as
`grpo-run check --env retry --dataset arithmetic`) passing, and failing, each on its own property, for broken
copies: one that pays every episode, one whose verdict tells the answer, one that raises on junk."""

from dataclasses import replace

import pytest

from grpo_core import load_dataset
from grpo_core.testing import check_environment, get_spec

from grpo_env_retry import ENVIRONMENT, Retry


@pytest.fixture(scope="module")
def arithmetic():
    return load_dataset("arithmetic", {"size": 20})


def test_registered_through_the_entry_point():
    assert get_spec("environment", "retry").distribution == "grpo-env-retry"
    assert ENVIRONMENT.tool_names() == ["submit"]


@pytest.mark.parametrize("seed", range(10))
def test_the_environment_checks_pass(arithmetic, seed):
    report = check_environment("retry", arithmetic, seed=seed, max_examples=10)
    assert report.ok, [failure.to_dict() for failure in report.failures]
    assert not report.unchecked(), report.unchecked()  # the gold episode is checked too


@pytest.mark.parametrize("params", [{"tries": 1}, {"tries": 20, "decay": 1.0},
                                    {"reward_args": "extract=answer-tag,allow_expressions=false"}])
def test_the_checks_pass_with_other_parameters(arithmetic, params):
    report = check_environment("retry", arithmetic, params=params, seed=0, max_examples=5)
    assert report.ok, [failure.to_dict() for failure in report.failures]


def test_the_checks_pass_on_hard_word_problems():
    rows = load_dataset("arithmetic", {"size": 20, "difficulty": "hard", "few_shot": 0})
    report = check_environment("retry", rows, seed=0, max_examples=10)
    assert report.ok, [failure.to_dict() for failure in report.failures]


class PaysEveryEpisode(Retry):
    """The bug the checks exist for: an episode that does nothing is paid."""

    def get_reward(self) -> float:
        return 1.0


class TellsTheAnswer(Retry):
    """A verdict that gives the answer away: 'wrong, it is 22'."""

    def submit(self, answer: str) -> str:
        """Submit your final answer.

        Args:
            answer: your final answer

        Returns:
            Whether it is right.
        """
        said = super().submit(answer)
        return f"{said}; it is {self._columns.get('answer')}" if said.startswith("wrong") else said


class RaisesOnJunk(Retry):
    """A tool that trusts its argument to be text."""

    def submit(self, answer: str) -> str:
        """Submit your final answer.

        Args:
            answer: your final answer

        Returns:
            Whether it is right.
        """
        return super().submit(answer.strip())


@pytest.mark.parametrize("broken, prop", [(PaysEveryEpisode, "do-nothing"), (TellsTheAnswer, "no leak"),
                                          (RaisesOnJunk, "hostile arguments")])
def test_a_broken_copy_fails_its_property(arithmetic, broken, prop):
    spec = replace(ENVIRONMENT, name="retry-broken", factory=broken)
    report = check_environment(spec, arithmetic, seed=0, max_examples=10)
    assert not report.ok
    assert prop in report.failed("retry-broken"), [failure.to_dict() for failure in report.failures]
