"""The timed executor: runs one call to a reward under a deadline, in a worker process or a daemon thread."""

from __future__ import annotations

import dataclasses
import pickle
import threading
from typing import Any, Callable

from grpo_core.rewards.declared import RewardChecks
from grpo_core.specs import RewardSpec
from grpo_core.rewards.pool import TIMEOUT, Failure, WorkerPool


class Hung(BaseException):
    """A call missed its deadline. A BaseException, so hypothesis stops at once instead of shrinking."""

    def __init__(self, seconds: float, example: dict | None = None, items: int = 1, call: tuple | None = None) -> None:
        super().__init__(f"no result after {seconds:.1f} s")
        self.seconds = seconds
        self.example = example
        self.items = items
        self.call = call  # (variant, items, shape): the call to try again, given longer


class OutOfTime(BaseException):
    """The property's share of the time budget is spent."""


def ping(spec_bytes: bytes) -> bool:
    """Whether a worker can load the reward (its module must be importable there)."""
    try:
        return isinstance(pickle.loads(spec_bytes), RewardSpec)
    except Exception:
        return False


_abandoned: list[threading.Thread] = []  # calls that missed their deadline and may still be running


def abandoned_calls() -> int:
    """How many reward calls missed their deadline and are still running in a thread of this process."""
    _abandoned[:] = [t for t in _abandoned if t.is_alive()]
    return len(_abandoned)


def watched(func: Callable, args: tuple, seconds: float):
    """``func(*args)`` in a daemon thread; raise Hung if it has not returned after ``seconds``."""
    box: dict[str, Any] = {}

    def target():
        try:
            box["value"] = func(*args)
        except BaseException as error:  # handed to the caller
            box["error"] = error

    thread = threading.Thread(target=target, name="grpo-check-call", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        _abandoned.append(thread)
        raise Hung(seconds)
    if "error" in box:
        raise box["error"]
    return box["value"]


class Executor:
    """Runs calls to one reward under a deadline.

    A reward without its own timeout runs in a worker process, which is killed when it misses
    the deadline (a thread cannot be stopped, and a runaway regex holds the GIL). Rewards that
    cannot be sent to a worker run in a daemon thread instead. A reward with a declared timeout
    already runs its items in the Reward callable's worker pool, so its calls only need a thread.
    """

    def __init__(self, spec: RewardSpec) -> None:
        self.spec = spec
        self.mode = "thread" if spec.timeout is not None else "process"
        self.pool = None

    def portable(self, spec: RewardSpec) -> RewardSpec:
        """The spec as sent to a worker: only the function and what the Reward callable reads."""
        return dataclasses.replace(spec, checks=RewardChecks(), validate=None)

    def run(self, func: Callable, args: tuple, seconds: float):
        if self.mode == "process" and self._start():
            result = self.pool.map(func, [(args, {})], seconds)[0]
            if result is TIMEOUT:
                raise Hung(seconds)
            if not isinstance(result, Failure):
                return result
            if result.error == "worker process died":
                return ("died", "the process scoring it died (out of memory, or a crash in native code)")
            self.mode = "thread"  # the worker could not load the call; run it here instead
        return watched(func, args, seconds)

    def _start(self) -> bool:
        if self.pool is not None:
            return True
        if getattr(self.spec.func, "__module__", None) == "__main__":  # a worker cannot import a script
            self.mode = "thread"
            return False
        try:
            spec_bytes = pickle.dumps(self.portable(self.spec))
        except Exception:
            self.mode = "thread"
            return False
        self.pool = WorkerPool(size=1)
        ok = self.pool.map(ping, [((spec_bytes,), {})], 60.0)[0]
        if ok is not True or isinstance(ok, Failure):
            self.close()
            self.mode = "thread"
            return False
        return True

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None
