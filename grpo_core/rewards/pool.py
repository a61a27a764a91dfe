"""One pool of worker processes, shared by every reward of a run, running calls under hard per-item deadlines.

Signal-based timeouts only work on the main thread, and TRL may call rewards from others. A Python thread cannot
be killed, so work that may hang runs in worker processes: a worker that misses its deadline is killed and
replaced, and the item is reported as timed out. Workers die with this process however it dies: on Linux through
a parent-death signal, elsewhere by watching a pipe that closes when it exits. Workers are plain
``python -m grpo_core.rewards._worker`` subprocesses, so a user's training script is never re-imported in them
(the trap of multiprocessing's spawn and forkserver).

Several threads may call ``map`` at once (the rewards of one step run concurrently): one dispatcher thread owns the
workers and hands them the items of every waiting call in turn, so each call's items spread over all the workers.
"""

from __future__ import annotations

import atexit
import collections
import itertools
import os
import pickle
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Callable

from grpo_core.errors import UsageError

TIMEOUT = object()  # sentinel result for an item that missed its deadline
LOAD_ALLOWANCE = 120.0  # seconds a fresh worker may spend importing a reward's module (sympy and the like)
WORKERS_ENV = "GRPO_REWARD_WORKERS"


@dataclass
class Failure:
    """An item whose call raised: the exception type and message, as text."""

    error: str


def default_workers() -> int:
    """Workers for this process: ``GRPO_REWARD_WORKERS``, else the cores it may run on, shared among the training
    processes of this machine (accelerate's ``LOCAL_WORLD_SIZE``)."""
    given = os.environ.get(WORKERS_ENV, "").strip()
    if given:
        if not given.isdigit() or int(given) < 1:
            raise UsageError(f"{WORKERS_ENV}={given!r} is not a number of worker processes; set a whole number "
                             "of at least 1, or unset it to use every core")
        return int(given)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    ranks = os.environ.get("LOCAL_WORLD_SIZE", "1")
    return max(1, cores // max(1, int(ranks) if ranks.isdigit() else 1))


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
            self.proc = subprocess.Popen(argv, pass_fds=fds, stdin=subprocess.DEVNULL, close_fds=True, env=env)
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


@dataclass(eq=False)
class _Job:
    """One ``map`` call: its items, the results so far and the future its caller waits on."""

    payload: bytes
    calls: list
    timeout: float
    once_per_worker: bool = False  # warm-ups: each item on a different worker
    results: list = field(default_factory=list)
    pending: collections.deque = field(default_factory=collections.deque)
    left: int = 0
    ran_on: set = field(default_factory=set)
    cancelled: bool = False
    future: Future = field(default_factory=Future)

    def __post_init__(self) -> None:
        self.results = [None] * len(self.calls)
        self.pending = collections.deque(range(len(self.calls)))
        self.left = len(self.calls)

    def finish(self, index: int, value: Any) -> None:
        if self.cancelled or self.future.done():
            return
        self.results[index] = value
        self.left -= 1
        if not self.left:
            self.future.set_result(self.results)


@dataclass
class _Busy:
    worker: _Worker
    job: _Job
    index: int
    request: int
    deadline: float


class WorkerPool:
    """Up to ``size`` worker processes running picklable calls, each under a deadline, for any number of threads.

    Requests carry ids, and the workers still busy with a call that is left early (Ctrl-C, an exception) are killed,
    so no reply of a cut-off request ever reaches a later one.
    """

    def __init__(self, size: int | None = None) -> None:
        self.size = size or default_workers()
        self._workers: list[_Worker] = []  # from here on, only the dispatcher thread touches the workers
        self._idle: list[_Worker] = []
        self._busy: dict[Connection, _Busy] = {}
        self._jobs: collections.deque[_Job] = collections.deque()  # jobs with items not yet handed out, in turn
        self._cancelled: list[_Job] = []
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._thread: threading.Thread | None = None
        self._closed = False
        self.pid = os.getpid()

    # --- the callers' side ---------------------------------------------------------------------------------

    def map(self, func: Callable, calls: list[tuple[tuple, dict]], timeout: float) -> list[Any]:
        """Run ``func(*args, **kwargs)`` for each call; results are values, ``Failure`` or ``TIMEOUT``, in order."""
        return self._wait(self.submit(func, calls, timeout))

    def submit(self, func: Callable, calls: list[tuple[tuple, dict]], timeout: float,
               once_per_worker: bool = False) -> _Job:
        """Queue the calls and return at once; ``wait`` (or the job's ``future``) gives the results."""
        job = _Job(pickle.dumps(func), list(calls), float(timeout), once_per_worker)
        if not job.calls:
            job.future.set_result([])
            return job
        with self._lock:
            if self._closed:
                raise RuntimeError("the reward worker pool is closed")
            self._jobs.append(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._dispatch, name="grpo-reward-pool", daemon=True)
                self._thread.start()
        self._wake()
        return job

    def _wait(self, job: _Job) -> list[Any]:
        try:
            return job.future.result()
        except BaseException:
            self.cancel(job)
            raise

    def cancel(self, job: _Job) -> None:
        """Drop what is left of ``job``: its queued items are never run, the workers busy with it are killed."""
        with self._lock:
            if job.cancelled or job.future.done():
                return
            job.cancelled = True
            if job in self._jobs:
                self._jobs.remove(job)
            self._cancelled.append(job)
        self._wake()

    def warm(self, func: Callable, timeout: float) -> None:
        """Run ``func()`` once in each of ``size`` workers (starting them), e.g. to import a heavy module."""
        self._wait(self.submit(func, [((), {})] * self.size, timeout, once_per_worker=True))

    def pids(self) -> list[int]:
        """The worker processes' ids (for tests and diagnostics)."""
        return [worker.proc.pid for worker in list(self._workers)]

    def close(self) -> None:
        """Kill the workers and reap them; a ``map`` still waiting gets a RuntimeError."""
        with self._lock:
            self._closed = True
            jobs = list(self._jobs) + [busy.job for busy in self._busy.values()]
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        for worker in list(self._workers):
            worker.proc.kill()
        for worker in list(self._workers):  # an unreaped worker is reported as "still running" when collected
            try:
                worker.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        for job in jobs:
            if not job.future.done():
                job.future.set_exception(RuntimeError("the reward worker pool was closed during the call"))

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):  # a full pipe already wakes the dispatcher
            pass

    # --- the dispatcher thread ------------------------------------------------------------------------------

    def _dispatch(self) -> None:
        try:
            while not self._closed:
                self._drop_cancelled()
                for job, index, worker in self._take():
                    self._send(job, index, worker)
                deadlines = [busy.deadline for busy in self._busy.values()]
                timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
                for conn in wait([*self._busy, self._wake_r], timeout=timeout):
                    if conn == self._wake_r:
                        os.read(self._wake_r, 4096)
                    else:
                        self._receive(conn)
                self._expire()
        except BaseException as error:  # never leave a caller waiting forever
            with self._lock:
                self._closed = True
                jobs = list(self._jobs) + [busy.job for busy in self._busy.values()]
            for job in jobs:
                if not job.future.done():
                    job.future.set_exception(RuntimeError(f"the reward worker pool failed: {error!r}"))

    def _drop_cancelled(self) -> None:
        with self._lock:
            cancelled, self._cancelled = self._cancelled, []
        for job in cancelled:  # their requests were cut off: their replies must never be read
            for conn, busy in list(self._busy.items()):
                if busy.job is job:
                    del self._busy[conn]
                    self._retire(busy.worker)

    def _take(self) -> list[tuple[_Job, int, _Worker | None]]:
        """Items to start now, one job's item after another's, each with an idle worker (None: start one)."""
        free = list(self._idle)
        startable = self.size - len(self._workers)
        taken, waiting = [], []
        with self._lock:
            while self._jobs and (free or startable):
                job = self._jobs.popleft()
                worker = next((w for w in free if id(w) not in job.ran_on), None) if job.once_per_worker else (
                    free[0] if free else None)
                if worker is None and not startable:
                    waiting.append(job)  # a warm-up that has run on every free worker waits for another
                    continue
                if worker is None:
                    startable -= 1
                else:
                    free.remove(worker)
                taken.append((job, job.pending.popleft(), worker))
                if job.pending:
                    self._jobs.append(job)
            self._jobs.extend(waiting)
        return taken

    def _send(self, job: _Job, index: int, worker: _Worker | None) -> None:
        args, kwargs = job.calls[index]
        request = next(self._ids)
        # The id travels outside the call, so the worker can name the request even if the call fails to load.
        message = pickle.dumps((request, pickle.dumps((job.payload, args, kwargs))))
        for attempt in (1, 2):
            try:
                if worker is None:
                    worker = _Worker()
                    self._workers.append(worker)
                else:
                    self._idle.remove(worker)
                worker.send_conn.send_bytes(message)
                break
            except (BrokenPipeError, OSError) as error:  # a worker that died idle, or one that could not start
                if worker is not None:
                    self._retire(worker)
                    worker = None
                if attempt == 2:
                    job.finish(index, Failure(f"could not start a worker process: {error}"))
                    return
        job.ran_on.add(id(worker))
        # Until the worker says it has imported the function, the clock is the load allowance.
        deadline = time.monotonic() + max(job.timeout, LOAD_ALLOWANCE)
        self._busy[worker.recv_conn] = _Busy(worker, job, index, request, deadline)

    def _receive(self, conn: Connection) -> None:
        busy = self._busy.get(conn)
        if busy is None:
            return
        try:
            reply, status, value = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):  # the worker died (e.g. out of memory)
            del self._busy[conn]
            self._retire(busy.worker)
            busy.job.finish(busy.index, Failure("worker process died"))
            return
        if reply != busy.request:  # cannot happen with killed workers; never trust a stray reply
            return
        if status == "started":  # imports done: the item's own deadline starts now
            busy.deadline = time.monotonic() + busy.job.timeout
            return
        del self._busy[conn]
        self._idle.append(busy.worker)
        busy.job.finish(busy.index, value if status == "ok" else Failure(value))

    def _expire(self) -> None:
        now = time.monotonic()
        for conn, busy in list(self._busy.items()):
            if busy.deadline <= now:
                del self._busy[conn]
                self._retire(busy.worker)
                busy.job.finish(busy.index, TIMEOUT)

    def _retire(self, worker: _Worker) -> None:
        """Kill a worker; a fresh one starts when an item needs it."""
        worker.kill()
        self._workers.remove(worker)
        if worker in self._idle:
            self._idle.remove(worker)


_pool: WorkerPool | None = None
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
