import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"


@pytest.fixture(autouse=True)
def fresh_registry():
    """Each test loads the installed plugins afresh."""
    from grpo_core.testing import reload_plugins

    reload_plugins()
    yield
    reload_plugins()


@pytest.fixture
def isolated():
    """Skip, with the reason, where this machine cannot isolate a program (no user namespaces, no bubblewrap)."""
    from grpo_reward_code.sandbox import probe

    missing = probe("bubblewrap")
    if missing:
        pytest.skip(f"no sandbox on this machine: {missing}")
