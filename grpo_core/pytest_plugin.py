"""pytest plugin (entry point ``pytest11``): the ``grpo_check`` fixture for reward packages.

    def test_properties(grpo_check):
        grpo_check(SPEC)                       # or grpo_check("my-reward", params={"k": 1})

The fixture runs the whole property suite and fails the test with the report. ``--grpo-max-examples``
and ``--grpo-seed`` change how many examples are drawn and from which seed. pytest loads this plugin into
every test session of the environment, so the checks are imported only when the fixture is used.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("grpo", "grpo-core reward property checks")
    group.addoption("--grpo-max-examples", type=int, default=None,
                    help="examples per property for the grpo_check fixture (default: grpo-core's default)")
    group.addoption("--grpo-seed", type=int, default=None, help="seed for the grpo_check fixture")


@pytest.fixture
def grpo_check(request):
    """``grpo_check(spec_or_name, params=None, **options)``: run the reward property checks, fail on any failure.

    Options are those of ``grpo_core.testing.check_reward`` (``max_examples``, ``seed``, ``rows``,
    ``vary_params``, ``item_timeout_s``). Returns the CheckReport when every property holds.
    """
    from grpo_core.testing import check_reward  # here: most sessions never use the fixture (see the docstring)

    config = request.config

    def run(reward, params=None, **options):
        if config.getoption("grpo_max_examples") is not None:
            options.setdefault("max_examples", config.getoption("grpo_max_examples"))
        if config.getoption("grpo_seed") is not None:
            options.setdefault("seed", config.getoption("grpo_seed"))
        __tracebackhide__ = True
        try:
            return check_reward(reward, params, **options)
        except AssertionError as error:
            report = str(error)
        # Outside the except block, so pytest shows the report once, not again as the failure's context.
        pytest.fail(report, pytrace=False)

    return run
