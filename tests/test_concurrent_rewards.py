"""The rewards of a step scored at once: one shared worker pool, rewards that wait awaited by TRL."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import threading
import time

import pytest

import reward_fixtures as fx
from grpo_core import ConcurrentReward, Param, Reward, RewardSpec, UsageError, hookimpl, load_rewards
from grpo_core.plugins import registered
from grpo_core.rewards import pool as pool_module
from grpo_core.rewards.pool import TIMEOUT, WorkerPool, default_workers

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [TESTS_DIR, os.environ.get("PYTHONPATH")])))


@pytest.fixture
def pool():
    pool = WorkerPool(size=2)
    pool.map(fx.echo, [((0,), {})] * 2, 60.0)  # both workers started and loaded
    yield pool
    pool.close()


def test_threads_calling_one_pool_at_once_each_get_their_own_results_in_order(pool):
    results = {}

    def call(tag):
        results[tag] = pool.map(fx.echo, [((f"{tag}{i}", 0.05), {}) for i in range(6)], 30.0)

    threads = [threading.Thread(target=call, args=(tag,)) for tag in "abc"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == {tag: [f"{tag}{i}" for i in range(6)] for tag in "abc"}
    assert len(pool.pids()) == 2  # one pool of two workers served all three


def test_a_small_call_is_not_stuck_behind_a_large_one(pool):
    large = pool.submit(fx.echo, [((i, 0.2), {}) for i in range(20)], 30.0)  # 2 s of work on two workers
    started = time.monotonic()
    assert pool.map(fx.echo, [(("small",), {})], 30.0) == ["small"]
    assert time.monotonic() - started < 1.0  # served in turn, not after the 20 items
    assert large.future.result(30) == list(range(20))


def test_an_item_past_its_limit_times_out_without_holding_up_another_call(pool):
    slow = pool.submit(fx.echo, [(("late", 5.0), {})], 0.3)
    assert pool.map(fx.echo, [((i,), {}) for i in range(4)], 30.0) == [0, 1, 2, 3]
    assert slow.future.result(10) == [TIMEOUT]


def test_warm_runs_once_in_every_worker(tmp_path, pool):
    path = tmp_path / "pids"
    pool.warm(functools.partial(fx.note_pid, str(path)), 30.0)
    assert sorted(map(int, path.read_text().split())) == sorted(pool.pids())


def test_by_default_the_workers_are_the_cores_this_process_may_use_shared_among_its_machine_s_ranks(monkeypatch):
    monkeypatch.delenv("GRPO_REWARD_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    assert default_workers() == 16
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")  # set by accelerate launch in each training process
    assert default_workers() == 4
    monkeypatch.setenv("GRPO_REWARD_WORKERS", "3")
    assert default_workers() == 3
    monkeypatch.setenv("GRPO_REWARD_WORKERS", "many")
    with pytest.raises(UsageError, match="GRPO_REWARD_WORKERS='many' is not a number of worker processes"):
        default_workers()


def test_configure_scoring_sizes_the_shared_pool(monkeypatch):
    from grpo_core import configure_scoring
    from grpo_core.rewards.backend import scoring_pool

    configure_scoring(workers=3)
    try:
        assert scoring_pool().size == 3
        with pytest.raises(UsageError, match="reward backend 'spark' is not one of local, ray"):
            configure_scoring(backend="spark")
        with pytest.raises(UsageError, match="ray_address '1.2.3.4:6379' is given but the reward backend is local"):
            configure_scoring(ray_address="1.2.3.4:6379")
    finally:
        configure_scoring()
    assert scoring_pool().size == default_workers()


class Plugin:
    @hookimpl
    def register_rewards(self, register):
        register(RewardSpec("pooled", "scored in worker processes", fx.count_a, timeout=5.0))
        register(RewardSpec("plain", "scored in this process", fx.count_a))
        register(RewardSpec("awaited", "an async reward", fx.waits_async, timeout=0.5,
                            params=(Param("delay", 0.0, float),)))


def test_rewards_that_wait_reach_trl_as_async_callables_and_quick_ones_stay_plain():
    from trl.trainer.utils import is_async_callable

    with registered(Plugin()):
        pooled, plain, awaited = load_rewards(["pooled", "plain", "awaited"])
    assert type(pooled) is ConcurrentReward and is_async_callable(pooled)
    assert type(plain) is Reward and not is_async_callable(plain)
    assert is_async_callable(awaited)
    batch = dict(prompts=["p"] * 3, completions=["aa", "ab", "boom"])
    assert asyncio.run(pooled(**batch)) == pooled.score(**batch) == plain(**batch) == [1.0, 0.5, None]


def test_an_async_reward_scores_items_at_once_and_its_limit_cancels_a_wait():
    with registered(Plugin()):
        (quick,) = load_rewards(["awaited"], {"awaited": {"delay": 0.2}})
        (late,) = load_rewards(["awaited"], {"awaited": {"delay": 5.0}})
    logged = {}
    started = time.monotonic()
    assert quick.score(prompts=["p"] * 8, completions=["abc"] * 7 + ["boom"], log_metric=logged.__setitem__) == \
        [3.0] * 7 + [None]
    assert time.monotonic() - started < 1.5  # eight waits of 0.2 s at once, not one after the other
    assert logged["rewards/awaited/errors"] == 1.0
    assert late.score(prompts=["p"] * 2, completions=["a", "b"], log_metric=logged.__setitem__) == [None, None]
    assert logged["rewards/awaited/timeouts"] == 2.0


class LazyPlugin:
    @hookimpl
    def register_rewards(self, register):
        register(RewardSpec("awaited-lazy", "an async reward named by its module", "reward_fixtures:waits_async"))


def test_an_async_reward_named_as_a_module_string_is_awaited_too():
    with registered(LazyPlugin()):
        (reward,) = load_rewards(["awaited-lazy"])
    assert type(reward) is ConcurrentReward
    assert reward.score(prompts=["p"] * 2, completions=["abc", "boom"]) == [3.0, None]


def test_an_async_reward_can_be_scored_where_an_event_loop_is_running():
    with registered(Plugin()):
        (reward,) = load_rewards(["awaited"])

    async def in_a_notebook_cell():
        return reward.score(prompts=["p"], completions=["abcd"])

    assert asyncio.run(in_a_notebook_cell()) == [4.0]


class Timed:
    def __init__(self, path):
        self.path = path

    @hookimpl
    def register_rewards(self, register):
        for name in ("first", "second", "third"):
            register(RewardSpec(name, "notes when it ran", fx.timed, timeout=5.0,
                                params=(Param("path", self.path, str), Param("name", name, str))))


@pytest.mark.slow
def test_a_training_step_scores_its_rewards_at_the_same_time_and_logs_the_same_metrics(tmp_path, cache_dir):
    from grpo_core.settings.declared import RunSettings
    from grpo_core.training.resolve import resolve

    from cli_helpers import train_run

    path = tmp_path / "calls.jsonl"
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"Say {i}"}) + "\n" for i in range(4)))
    with registered(Timed(str(path))):
        settings = RunSettings(
            rewards=["first", "second", "third"], dataset="local", dataset_args={"path": str(data)},
            model="tiny-random",
            grpo={"max_steps": 1, "num_generations": 2, "per_device_train_batch_size": 8, "max_completion_length": 4,
                  "output_dir": str(tmp_path / "out"), "save_strategy": "no", "logging_steps": 1},
        )
        run = resolve(settings, log=lambda message: None)
        train_run(run, log=lambda message: None, progress=False)
    calls = [json.loads(line) for line in path.read_text().splitlines()]
    spans = {name: (min(c["start"] for c in calls if c["name"] == name), max(c["end"] for c in calls if c["name"] == name))
             for name in ("first", "second", "third")}
    assert len(calls) == 3 * 8
    # Called one after the other, each reward would end before the next began; at once, their spans overlap.
    latest_start = max(start for start, _ in spans.values())
    earliest_end = min(end for _, end in spans.values())
    assert latest_start < earliest_end, spans
    (record,) = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()
                 if "reward" in json.loads(line)]
    for name in ("first", "second", "third"):
        assert record[f"rewards/{name}/mean"] == 1.0
        assert record[f"rewards/{name}/errors"] == record[f"rewards/{name}/timeouts"] == 0.0


@pytest.fixture
def one_worker():
    pool = WorkerPool(size=1)
    pool.map(fx.echo, [((0,), {})], 60.0)
    yield pool
    pool.close()


def test_an_item_queued_behind_one_that_hangs_runs_on_a_fresh_worker(one_worker):
    started = time.monotonic()
    assert one_worker.map(fx.echo, [(("hung", 60.0), {}), (("next",), {})], 0.5) == [TIMEOUT, "next"]
    assert time.monotonic() - started < 5


def test_an_item_queued_behind_one_whose_worker_dies_is_still_scored(one_worker):
    died = one_worker.map(fx.die, [((), {})], 30.0)
    assert died[0].error == "worker process died"
    crash = one_worker.submit(fx.die, [((), {})], 30.0)
    queued = one_worker.submit(fx.echo, [(("after",), {})], 30.0)  # in the same worker's pipe, behind the crash
    assert crash.future.result(30)[0].error == "worker process died"
    assert queued.future.result(30) == ["after"]


def test_a_large_call_waits_for_an_idle_worker_so_a_hung_one_still_times_out(one_worker):
    large = "y" * 1_000_000  # larger than a pipe holds: queued behind a hung call, its send would block the pool
    started = time.monotonic()
    assert one_worker.map(fx.echo, [(("hung", 60.0), {}), ((large,), {})], 0.5) == [TIMEOUT, large]
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_a_per_item_reward_s_unscored_items_are_counted_by_their_reason(timeout):
    reward = Reward(RewardSpec("says-why", "returns Unscored", fx.unscored_by_text, timeout=timeout), {})
    logged = {}
    scores = reward.score(prompts=["p"] * 3, completions=["slow", "odd", "fine"], log_metric=logged.__setitem__)
    assert scores == [0.0, None, 1.0]
    assert (logged["rewards/says-why/timeouts"], logged["rewards/says-why/unscorable"],
            logged["rewards/says-why/errors"]) == (1.0, 1.0, 0.0)


def test_a_closed_pool_gives_back_its_file_descriptors():
    def open_fds():
        return len(os.listdir("/proc/self/fd"))

    before = open_fds()
    for _ in range(5):
        pool = WorkerPool(size=1)
        assert pool.map(fx.echo, [((1,), {})], 30.0) == [1]
        pool.close()
        pool.close()  # closing twice is harmless
    assert open_fds() == before
