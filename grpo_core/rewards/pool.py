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

import collections
import itertools
import math
import os
import pickle
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
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
        from multiprocessing.connection import Connection  # not at the top: grpo-run's listings import this module

        self.send_conn = Connection(to_child_w, readable=False)
        self.recv_conn = Connection(from_child_r, writable=False)
        self.queue: collections.deque = collections.deque()  # the _Sent requests in its pipe, oldest first
        self._released = False

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.release()

    def release(self) -> None:
        """Close this side of its pipes (after it is dead), once: a number closed twice may be another file's."""
        if self._released:
            return
        self._released = True
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
    encoded: dict = field(default_factory=dict)  # index -> the pickled call, kept while it waits for a worker
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
class _Sent:
    """A request in a worker's pipe: the first one is running (or loading), the next waits behind it."""

    job: _Job
    index: int
    request: int
    deadline: float = math.inf  # the first request's: the load allowance, then from "started" its own limit


class WorkerPool:
    """Up to ``size`` worker processes running picklable calls, each under a deadline, for any number of threads.

    Each worker has up to ``DEPTH`` requests in its pipe, so it starts the next item the moment it finishes one, even
    while the dispatcher thread waits for the GIL. Requests carry ids, and the workers holding a call that is left
    early (Ctrl-C, an exception) are killed, so no reply of a cut-off request ever reaches a later one.
    """

    DEPTH = 2
    QUEUED_BYTES = 16_384  # a larger request waits for an idle worker: a full pipe would block the dispatcher

    def __init__(self, size: int | None = None) -> None:
        self.size = size or default_workers()
        self._workers: list[_Worker] = []  # from here on, only the dispatcher thread touches the workers
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
        """Drop what is left of ``job``: its queued items are never run, the workers holding one are killed."""
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
            jobs = list(self._jobs) + [sent.job for worker in list(self._workers) for sent in list(worker.queue)]
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        if self._thread is None or not self._thread.is_alive():  # the dispatcher is gone: its wake pipe too
            with self._lock:
                if self._wake_w is not None:
                    os.close(self._wake_w)
                    os.close(self._wake_r)
                    self._wake_w = None
        for worker in list(self._workers):
            worker.proc.kill()
        for worker in list(self._workers):  # an unreaped worker is reported as "still running" when collected
            try:
                worker.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            worker.release()
        for job in jobs:
            if not job.future.done():
                job.future.set_exception(RuntimeError("the reward worker pool was closed during the call"))

    def _wake(self) -> None:
        with self._lock:  # never a write to a closed pipe's number, which another file may have taken since
            if self._wake_w is None:
                return
            try:
                os.write(self._wake_w, b"x")
            except (BlockingIOError, OSError):  # a full pipe already wakes the dispatcher
                pass

    # --- the dispatcher thread ------------------------------------------------------------------------------

    def _dispatch(self) -> None:
        from multiprocessing.connection import wait

        try:
            while not self._closed:
                self._drop_cancelled()
                for job, index, worker, call in self._take():
                    self._send(job, index, worker, call)
                busy = [worker for worker in self._workers if worker.queue]
                deadline = min((worker.queue[0].deadline for worker in busy), default=math.inf)
                timeout = None if deadline == math.inf else max(0.0, deadline - time.monotonic())
                by_conn = {worker.recv_conn: worker for worker in busy}
                for conn in wait([*by_conn, self._wake_r], timeout=timeout):
                    if conn == self._wake_r:
                        os.read(self._wake_r, 4096)
                    else:
                        self._receive(by_conn[conn])
                self._expire()
        except BaseException as error:  # never leave a caller waiting forever
            with self._lock:
                self._closed = True
                jobs = list(self._jobs) + [sent.job for worker in self._workers for sent in worker.queue]
            for job in jobs:
                if not job.future.done():
                    job.future.set_exception(RuntimeError(f"the reward worker pool failed: {error!r}"))

    def _drop_cancelled(self) -> None:
        with self._lock:
            cancelled, self._cancelled = self._cancelled, []
        for job in cancelled:  # their requests were cut off: their replies must never be read
            for worker in list(self._workers):
                if any(sent.job is job for sent in worker.queue):
                    self._retire(worker)

    def _take(self) -> list[tuple[_Job, int, _Worker | None, bytes]]:
        """Items to send now, one job's item after another's, each with a worker (None: start one): idle workers
        first, then new ones, then a second request behind a busy worker's (when it is small)."""
        idle = [worker for worker in self._workers if not worker.queue]
        behind = [worker for worker in self._workers if len(worker.queue) < self.DEPTH and worker.queue]
        startable = self.size - len(self._workers)
        taken, waiting = [], []
        with self._lock:
            while self._jobs and (idle or startable or behind):
                job = self._jobs.popleft()
                index = job.pending[0]
                call = job.encoded.get(index) or job.encoded.setdefault(
                    index, pickle.dumps((job.payload, *job.calls[index])))
                if job.once_per_worker:  # warm-ups: a different worker for each, never queued behind another
                    worker = next((w for w in idle if id(w) not in job.ran_on), None)
                    usable = worker is not None or startable > 0
                else:
                    worker = idle[0] if idle else None
                    if worker is None and not startable and len(call) <= self.QUEUED_BYTES and behind:
                        worker = behind[0]
                    usable = worker is not None or startable > 0
                if not usable:
                    waiting.append(job)  # waits for an idle worker
                    continue
                job.pending.popleft()
                if worker is None:
                    startable -= 1
                elif worker in idle:
                    idle.remove(worker)
                else:
                    behind.remove(worker)
                taken.append((job, index, worker, job.encoded.pop(index)))
                if job.pending:
                    self._jobs.append(job)
            self._jobs.extend(waiting)
        return taken

    def _send(self, job: _Job, index: int, worker: _Worker | None, call: bytes) -> None:
        request = next(self._ids)
        # The id travels outside the call, so the worker can name the request even if the call fails to load.
        message = pickle.dumps((request, call))
        for attempt in (1, 2):
            try:
                if worker is None:
                    worker = _Worker()
                    self._workers.append(worker)
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
        sent = _Sent(job, index, request)
        worker.queue.append(sent)
        if len(worker.queue) == 1:
            self._start_clock(sent)

    def _start_clock(self, sent: _Sent) -> None:
        """The first request in a worker's pipe: until the worker has loaded the function, the load allowance."""
        sent.deadline = time.monotonic() + max(sent.job.timeout, LOAD_ALLOWANCE)

    def _receive(self, worker: _Worker) -> None:
        sent = worker.queue[0]
        try:
            reply, status, value = pickle.loads(worker.recv_conn.recv_bytes())
        except (EOFError, OSError):  # the worker died (e.g. out of memory)
            worker.queue.popleft()
            self._retire(worker)
            sent.job.finish(sent.index, Failure("worker process died"))
            return
        if reply != sent.request:  # cannot happen with killed workers; never trust a stray reply
            return
        if status == "started":  # imports done: the item's own deadline starts now
            sent.deadline = time.monotonic() + sent.job.timeout
            return
        worker.queue.popleft()
        if worker.queue:
            self._start_clock(worker.queue[0])
        sent.job.finish(sent.index, value if status == "ok" else Failure(value))

    def _expire(self) -> None:
        now = time.monotonic()
        for worker in list(self._workers):
            if worker.queue and worker.queue[0].deadline <= now:
                sent = worker.queue.popleft()
                self._retire(worker)
                sent.job.finish(sent.index, TIMEOUT)

    def _retire(self, worker: _Worker) -> None:
        """Kill a worker (a fresh one starts when an item needs it); the requests still in its pipe never ran, so
        they go back to the front of their jobs' queues."""
        worker.kill()
        self._workers.remove(worker)
        with self._lock:
            for sent in reversed(worker.queue):
                if not sent.job.cancelled and not sent.job.future.done():
                    sent.job.pending.appendleft(sent.index)
                    if sent.job not in self._jobs:
                        self._jobs.appendleft(sent.job)
        worker.queue.clear()
