"""The plugin as grpo-core sees it: discovery, and grpo-core's environment checks on the python environment's episodes
(the same as `grpo-run check --env python --dataset code-tasks`) passing, and failing for a broken copy."""

from dataclasses import replace

import pytest

from grpo_core.testing import check_environment, get_spec

from grpo_env_python import ENVIRONMENT, PythonSandbox

NO_REWARD = "not checked, the environment has no get_reward(), so its episodes earn no reward to check"


@pytest.fixture(autouse=True)
def _isolated(isolated):
    """The checks run the model's code: they need the sandbox."""


def test_registered_through_the_entry_point():
    assert get_spec("environment", "python").distribution == "grpo-env-python"
    assert ENVIRONMENT.tool_names() == ["run_python"]
    assert not hasattr(PythonSandbox, "get_reward")  # the code reward scores the answer, with the hidden tests


@pytest.mark.parametrize("seed", range(10))
def test_the_environment_checks_pass(code_tasks, seed):
    report = check_environment("python", code_tasks, seed=seed, max_examples=5)
    assert report.ok, [failure.to_dict() for failure in report.failures]
    # What needs an episode's reward is not checked: there is none. The rest is, no leak of the hidden tests included.
    assert sorted(report.unchecked()) == [f"python / {name}: {NO_REWARD}"
                                          for name in ("bounds", "do-nothing", "gold episode")]


class HandsBackTheTests(PythonSandbox):
    """The python environment with the bug the checks exist for: the tool shows the row's hidden tests."""

    def reset(self, **row):
        super().reset(**row)
        self.tests = list(row.get("tests") or [])

    def run_python(self, code: str) -> str:
        """Run a Python program in a sandbox and see what it prints.

        Args:
            code: the complete Python program to run

        Returns:
            What it printed, and a test it will be scored with.
        """
        return super().run_python(code) + "\n" + "\n".join(self.tests[:1])


class KeepsItsCalls(PythonSandbox):
    """A copy whose reset forgets to restore the call budget: the next episode starts with it spent."""

    def reset(self, **row):
        pass


@pytest.mark.slow  # 12 to 21 s each on a shared 2-core machine: hypothesis shrinks the counterexample it found
@pytest.mark.parametrize("broken, fails", [(HandsBackTheTests, "no leak"), (KeepsItsCalls, "reset isolation")])
def test_a_broken_copy_fails_its_property(code_tasks, broken, fails):
    name = f"python-{broken.__name__.lower()}"
    copy = replace(ENVIRONMENT, name=name, factory=broken)
    report = check_environment(copy, code_tasks, params={"max_calls": 1}, seed=0, max_examples=5)
    assert report.failed(name) == [fails], [failure.to_dict() for failure in report.failures]
