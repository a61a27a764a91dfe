"""Hard per-item timeouts that work from any thread.

Signal-based timeouts only work on the main thread, and TRL may call rewards from others.
A Python thread cannot be killed, so work that may hang runs in worker processes: a worker
that misses its deadline is killed and replaced, and the item is reported as timed out. Workers
die with this process however it dies: on Linux through a parent-death signal, elsewhere by
watching a pipe that closes when it exits.
Workers are plain ``python -m grpo_core.rewards._worker`` subprocesses, so a user's training script
is never re-imported in them (the trap of multiprocessing's spawn and forkserver).
"""

from __future__ import annotations

import atexit
import functools
import itertools
import os
import pickle
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Callable

from grpo_core.rewards.unscored import Unscored

TIMEOUT = object()  # sentinel result for an item that missed its deadline
LOAD_ALLOWANCE = 120.0  # seconds a fresh worker may spend importing a reward's module (sympy and the like)


@dataclass
class Failure:
    """An item whose call raised: the exception type and message, as text."""

    error: str


class _Worker:
    def __init__(self) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        life_r, self._life_w = os.pipe()  # never written: the worker sees it close when this process dies
        # The worker imports reward modules by name, so it gets this process's import path.
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        argv = [sys.executable, "-m", "grpo_core.rewards._worker", str(to_child_r), str(from_child_w), str(life_r),
                str(os.getpid())]
        fds = (to_child_r, from_child_w, life_r)
        try:
            self.proc = _spawn(argv, fds, env)
        finally:
            for fd in fds:
                os.close(fd)
        self.send_conn = Connection(to_child_w, readable=False)
        self.recv_conn = Connection(from_child_r, writable=False)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for closing in (self.send_conn.close, self.recv_conn.close, lambda: os.close(self._life_w)):
            try:
                closing()
            except OSError:
                pass


_spawner = None
_spawner_lock = threading.Lock()


def _spawn(argv: list[str], fds: tuple, env: dict) -> subprocess.Popen:
    """Start a worker from one long-lived thread: Linux's parent-death signal fires when the thread that
    started a child ends, and reward calls may come from short-lived threads."""
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            from concurrent.futures import ThreadPoolExecutor

            _spawner = ThreadPoolExecutor(1, thread_name_prefix="grpo-worker-spawner")
    start = functools.partial(subprocess.Popen, argv, pass_fds=fds, stdin=subprocess.DEVNULL, close_fds=True, env=env)
    return _spawner.submit(start).result()


class WorkerPool:
    """A fixed number of worker processes running picklable calls under a per-item deadline.

    Requests carry ids, and a worker still busy when ``map`` is left early (Ctrl-C, an exception) is
    killed, so no reply of a cut-off request ever reaches a later one.
    """

    def __init__(self, size: int | None = None) -> None:
        self.size = size or int(os.environ.get("GRPO_REWARD_WORKERS", "0")) or min(2, os.cpu_count() or 1)
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._ids = itertools.count()

    def map(self, func: Callable, calls: list[tuple[tuple, dict]], timeout: float) -> list[Any]:
        """Run ``func(*args, **kwargs)`` for each call; results are values, ``Failure`` or ``TIMEOUT``."""
        payload_func = pickle.dumps(func)
        with self._lock:
            busy: dict[Connection, tuple[_Worker, int, int, float]] = {}  # conn -> (worker, index, request, deadline)
            try:
                return self._map(payload_func, calls, timeout, busy)
            except BaseException:
                for worker, *_ in busy.values():  # their requests were cut off: their replies must never be read
                    worker.kill()
                    self._workers.remove(worker)
                raise

    def _map(self, payload_func: bytes, calls: list, timeout: float, busy: dict) -> list[Any]:
        while len(self._workers) < min(self.size, max(1, len(calls))):
            self._workers.append(_Worker())
        results: list[Any] = [None] * len(calls)
        pending = list(range(len(calls)))[::-1]
        idle = list(self._workers)
        while pending or busy:
            while pending and idle:
                worker = idle.pop()
                index = pending.pop()
                args, kwargs = calls[index]
                request = next(self._ids)
                # The id travels outside the call, so the worker can name the request even if the call fails to load.
                message = pickle.dumps((request, pickle.dumps((payload_func, args, kwargs))))
                # Until the worker says it has imported the function, the clock is the load allowance.
                deadline = time.monotonic() + max(timeout, LOAD_ALLOWANCE)
                busy[worker.recv_conn] = (worker, index, request, deadline)
                try:
                    worker.send_conn.send_bytes(message)
                except (BrokenPipeError, OSError):
                    del busy[worker.recv_conn]
                    worker = self._replace(worker)
                    busy[worker.recv_conn] = (worker, index, request, deadline)
                    worker.send_conn.send_bytes(message)
            next_deadline = min(deadline for *_, deadline in busy.values())
            ready = wait(list(busy), timeout=max(0.0, next_deadline - time.monotonic()))
            for conn in ready:
                worker, index, request, deadline = busy[conn]
                try:
                    reply, status, value = pickle.loads(conn.recv_bytes())
                except (EOFError, OSError):  # the worker died (e.g. out of memory)
                    del busy[conn]
                    results[index] = Failure("worker process died")
                    idle.append(self._replace(worker))
                    continue
                if reply != request:  # cannot happen with killed workers; never trust a stray reply
                    continue
                if status == "started":  # imports done: the item's own deadline starts now
                    busy[conn] = (worker, index, request, time.monotonic() + timeout)
                    continue
                del busy[conn]
                results[index] = value if status == "ok" else Failure(value)
                idle.append(worker)
            now = time.monotonic()
            for conn, (worker, index, _, deadline) in list(busy.items()):
                if deadline <= now:
                    del busy[conn]
                    results[index] = TIMEOUT
                    idle.append(self._replace(worker))
        return results

    def _replace(self, worker: _Worker) -> _Worker:
        worker.kill()
        fresh = _Worker()
        self._workers[self._workers.index(worker)] = fresh
        return fresh

    def pids(self) -> list[int]:
        """The worker processes' ids (for tests and diagnostics)."""
        return [worker.proc.pid for worker in self._workers]

    def close(self) -> None:
        """Kill the workers and reap them; does not wait for a ``map`` in progress (it may be stuck in a hung call)."""
        for worker in list(self._workers):
            worker.proc.kill()
        for worker in list(self._workers):  # an unreaped worker is reported as "still running" when collected
            try:
                worker.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


def get_pool() -> WorkerPool:
    """The process-wide pool, started on first use and stopped at exit."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = WorkerPool()
            atexit.register(_pool.close)
        return _pool


def run_with_timeouts(func: Callable, calls: list[tuple[tuple, dict]], seconds: float) -> list[Any]:
    """Run ``func(*args, **kwargs)`` for each ``(args, kwargs)`` in ``calls`` in worker processes, ``seconds`` each.

    Returns one result per call, in order: the call's value, ``Unscored("timeout", ...)`` for a call
    that missed its deadline (its worker is killed and replaced), or ``Unscored("error", ...)`` for one
    that raised. Works from any thread. ``func`` and its arguments must be picklable (a module-level
    function). ``GRPO_REWARD_WORKERS`` sets the number of workers. Public as ``grpo_core.run_with_timeouts``.
    """
    results = get_pool().map(func, calls, seconds)
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
    pool = get_pool()
    pool.map(func, [((), {})] * pool.size, seconds)
