"""What the tests of the property checks share: a quick run of the checks, and the environment their
worker processes need to import the fixture rewards."""

import os

import pytest

from grpo_core import Reward
from grpo_core.checks.run import run_checks

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
FAST = {"max_examples": 6, "seed": 0}


@pytest.fixture
def checks_environment(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # The checks run rewards in worker processes, which import the fixtures by module name.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [TESTS_DIR, os.environ.get("PYTHONPATH")])))


def check(spec, **options):
    return run_checks([Reward(spec, spec.resolve())], **{**FAST, **options})
