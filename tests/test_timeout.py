"""The worker pool behind every hard per-item limit: validated limits, interruptions, parent death."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import reward_fixtures as fx
from grpo_core import Param, RewardSpec, load_rewards
from grpo_core.errors import UsageError
from grpo_core.plugins import registered
from grpo_core.rewards.reward import Reward
from grpo_core.rewards.pool import TIMEOUT, WorkerPool

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [TESTS_DIR, os.environ.get("PYTHONPATH")])))


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_a_timeout_parameter_must_be_positive_and_finite(value):
    spec = RewardSpec("limited", "has a timeout parameter", fx.sleepy, timeout=1.0,
                      params=(Param("timeout", 1.0, float),))
    with pytest.raises(UsageError) as error:
        spec.resolve({"timeout": value})
    message = str(error.value)
    assert "\n" not in message
    assert message == (f"reward 'limited': parameter 'timeout': a timeout must be a positive, finite number of "
                       f"seconds, got {float(value)!r}")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0, -1])
def test_a_declared_timeout_must_be_positive_and_finite(value):
    spec = RewardSpec("limited", "declares a timeout", fx.sleepy, timeout=value)
    with pytest.raises(UsageError, match=f"RewardSpec\\(timeout=...\\).*got {value!r}"):
        spec.resolve()


def test_load_rewards_rejects_a_bad_timeout_argument():
    class Plugin:
        from grpo_core import hookimpl

        @hookimpl
        def register_rewards(self, register):
            register(RewardSpec("limited", "has a timeout parameter", fx.sleepy, timeout=1.0,
                                params=(Param("timeout", 1.0, float),)))

    with registered(Plugin()), pytest.raises(UsageError, match="got nan"):
        load_rewards(["limited"], {"limited": {"timeout": "nan"}})


def test_a_timeout_parameter_sets_the_per_item_limit():
    spec = RewardSpec("limited", "hangs on 'hang'", fx.sleepy, timeout=30.0, params=(Param("timeout", 30.0, float),))
    reward = Reward(spec, spec.resolve({"timeout": 0.5}))
    logged = {}
    started = time.monotonic()
    scores = reward(prompts=["p"] * 2, completions=["hang", "fine"], log_metric=logged.__setitem__)
    assert time.monotonic() - started < 10
    assert scores == [None, 1.0]
    assert logged["rewards/limited/timeouts"] == 1.0


def _interrupt_after(seconds):
    def handler(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    return previous


def test_a_closed_pool_leaves_no_worker_unreaped():
    pool = WorkerPool(size=2)
    pool.map(fx.echo, [((0,), {})] * 2, 30.0)
    processes = [worker.proc for worker in pool._workers]
    pool.close()
    assert [process.returncode for process in processes] == [-signal.SIGKILL] * 2


def test_the_next_call_after_an_interrupted_one_gets_its_own_answers_at_once():
    pool = WorkerPool(size=2)
    try:
        pool.map(fx.echo, [((0,), {})] * 2, 30.0)  # warm: both workers loaded
        previous = _interrupt_after(0.5)
        try:
            with pytest.raises(KeyboardInterrupt):
                pool.map(fx.echo, [(("old", 3.0), {}), (("old", 3.0), {}), (("old", 3.0), {})], 30.0)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        started = time.monotonic()
        assert pool.map(fx.echo, [((i,), {}) for i in range(6)], 30.0) == list(range(6))
        assert time.monotonic() - started < 2.5  # not after the cut-off 3 s items
        assert pool.map(fx.echo, [(("late", 0.2), {})], 0.05) == [TIMEOUT]
        assert pool.map(fx.echo, [(("next",), {})], 30.0) == ["next"]
    finally:
        pool.close()


PARENT = textwrap.dedent("""
    import sys
    import reward_fixtures as fx
    from grpo_core.rewards.pool import WorkerPool

    pool = WorkerPool(size=1)
    pool.map(fx.echo, [((0,), {})], 60.0)
    print(pool.pids()[0], flush=True)
    pool.map(fx.spin, [((600,), {})], 600.0)  # busy with a hard item when the parent is killed
""")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead; only its parent's wait is missing
        return stat.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_busy_worker_exits_when_its_parent_is_killed():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=TESTS_DIR + os.pathsep + os.environ["PYTHONPATH"]))
    try:
        worker = int(parent.stdout.readline())
        time.sleep(0.5)  # the worker is spinning on the hard item
        assert _alive(worker)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 5
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(worker), "the worker outlived its killed parent"
    finally:
        parent.kill()
