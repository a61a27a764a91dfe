"""Hard per-item time limits for plugin code: ``run_with_timeouts`` and ``warm_workers`` (public through grpo_core).

The calls run in the run's one pool of worker processes (grpo_core.rewards.pool), or on a Ray cluster when the run
scores there (grpo_core.rewards.backend); either way a call that misses its deadline is killed, not abandoned.
"""

from __future__ import annotations

from typing import Any, Callable

from grpo_core.rewards.backend import scoring_pool
from grpo_core.rewards.pool import TIMEOUT, Failure
from grpo_core.rewards.unscored import Unscored


def run_with_timeouts(func: Callable, calls: list[tuple[tuple, dict]], seconds: float) -> list[Any]:
    """Run ``func(*args, **kwargs)`` for each ``(args, kwargs)`` in ``calls`` in worker processes, ``seconds`` each.

    Returns one result per call, in order: the call's value, ``Unscored("timeout", ...)`` for a call
    that missed its deadline (its worker is killed and replaced), or ``Unscored("error", ...)`` for one
    that raised. Works from any thread, and from several at once: the calls of concurrent rewards share the
    workers. ``func`` and its arguments must be picklable (a module-level function). The run's
    ``reward_workers`` (or ``GRPO_REWARD_WORKERS``) sets the number of workers. Public as
    ``grpo_core.run_with_timeouts``.
    """
    results = scoring_pool().map(func, calls, seconds)
    return [
        Unscored("timeout", f"took longer than {seconds:g} s") if result is TIMEOUT
        else Unscored("error", result.error) if isinstance(result, Failure)
        else result
        for result in results
    ]


def warm_workers(func: Callable, seconds: float) -> None:
    """Run ``func()`` once in every worker process, e.g. to import a heavy module before deadlines matter.

    A worker started after a timeout starts cold: call this again after a result timed out.
    Public as ``grpo_core.warm_workers``.
    """
    scoring_pool().warm(func, seconds)
