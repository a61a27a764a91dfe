"""Where the CPU-heavy scoring of a run goes: the local worker pool (every core of this machine) or a Ray cluster.

``configure_scoring`` is called once per process with the run's ``reward_workers``, ``reward_backend`` and
``ray_address`` (grpo-run does it; a script that uses TRL directly may call it, public as
``grpo_core.configure_scoring``); ``scoring_pool`` is what every per-item limit runs on.
"""

from __future__ import annotations

import atexit
import os
import threading

from grpo_core.errors import UsageError
from grpo_core.rewards.pool import WorkerPool, default_workers

BACKENDS = ("local", "ray")

_lock = threading.Lock()
_ray = None  # the RayPool while the backend is ray
_chosen: tuple | None = None

_pool: WorkerPool | None = None  # the process-wide local pool
_pool_lock = threading.Lock()
_size: int | None = None  # set by configure_workers; None: default_workers()


def get_pool() -> WorkerPool:
    """The process-wide pool, started on first use and stopped at exit (a forked child starts its own)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool.pid != os.getpid():
            _pool = WorkerPool(_size)
            atexit.register(_pool.close)
        return _pool


def configure_workers(workers: int | None) -> None:
    """Size the process-wide pool: ``workers`` processes, or None for the default (``default_workers``)."""
    global _size, _pool
    with _pool_lock:
        _size = workers
        if _pool is not None and _pool.size != (workers or default_workers()):
            _pool.close()
            _pool = None


def validate_scoring(workers: int | None = None, backend: str = "local", ray_address: str | None = None) -> None:
    """Check the scoring settings by themselves (no cluster contacted): one sentence on what is wrong."""
    if backend not in BACKENDS:
        raise UsageError(f"reward backend {backend!r} is not one of {', '.join(BACKENDS)}; use local (this "
                         "machine's cores) or ray (a Ray cluster, with pip install \"grpo-core[ray]\")")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise UsageError(f"reward_workers must be a whole number of at least 1, got {workers!r}; leave it out to "
                         "use every core")
    if ray_address and backend != "ray":
        raise UsageError(f"ray_address {ray_address!r} is given but the reward backend is {backend}; add "
                         "--reward-backend ray, or leave the address out")


def configure_scoring(workers: int | None = None, backend: str = "local", ray_address: str | None = None) -> None:
    """Score this process's rewards with ``workers`` local processes (None: every core, shared by the training
    processes of the machine) or, with ``backend="ray"``, as Ray tasks on the cluster at ``ray_address`` (None: a
    local cluster). Connecting to the cluster happens here, so an unreachable one fails before a model loads."""
    global _ray, _chosen
    validate_scoring(workers, backend, ray_address)
    with _lock:
        if _chosen == (workers, backend, ray_address):
            return
        configure_workers(workers)
        if _ray is not None:
            _ray.close()
            _ray = None
        if backend == "ray":
            from grpo_core.rewards.ray_pool import RayPool, connect

            connect(ray_address)
            _ray = RayPool(ray_address, workers)
        _chosen = (workers, backend, ray_address)


def scoring_pool():
    """The pool the run's per-item limits run on: the Ray pool when configured, else the local worker pool."""
    return _ray if _ray is not None else get_pool()
