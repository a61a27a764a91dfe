import pytest

from grpo_core.testing import fresh_registry_fixture, offline_hub

offline_hub()
fresh_registry = fresh_registry_fixture()


@pytest.fixture
def isolated():
    """Skip, with the reason, where this machine cannot isolate a program (no user namespaces, no bubblewrap)."""
    from grpo_reward_code import sandbox_problem

    missing = sandbox_problem("bubblewrap")
    if missing:
        pytest.skip(f"no sandbox on this machine: {missing}")


@pytest.fixture(scope="module")
def code_tasks():
    """Twenty rows of the code reward's generated tasks: prompt, tests (hidden), solution, entry_point."""
    from grpo_core import load_dataset

    return load_dataset("code-tasks", {"size": 20})
