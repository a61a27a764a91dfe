import pytest

from grpo_core.testing import fresh_registry_fixture, offline_hub

offline_hub()
fresh_registry = fresh_registry_fixture()


@pytest.fixture
def isolated():
    """Skip, with the reason, where this machine cannot isolate a program (no user namespaces, no bubblewrap)."""
    from grpo_reward_code.sandbox import probe

    missing = probe("bubblewrap")
    if missing:
        pytest.skip(f"no sandbox on this machine: {missing}")
