"""Scoring on a Ray cluster, with the worker pool's contract: values, ``Failure`` or ``TIMEOUT``, in order.

Each Ray actor (one CPU) holds a local one-worker ``WorkerPool``, so a call that hangs, even inside C, is
killed at its deadline exactly as on one machine. As in the local pool, one dispatcher thread hands the items of
every waiting ``map`` to the actors in turn, with up to ``DEPTH`` items in each actor's queue, so an actor starts
its next item the moment it finishes one; it sleeps until a result arrives, a call is queued or a deadline falls
due. An actor or node that dies takes the item it was running with it: the item is retried once on another actor,
then it is a ``Failure``, never a missing or zero score (the items queued behind it never ran, and go back to the
queue). Ray is an optional extra (``grpo-core[ray]``), imported only inside this module's functions, so
``import grpo_core`` never loads it.
"""

from __future__ import annotations

import logging
import math
import os
import pickle
import queue
import socket
import sys
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable

from grpo_core.errors import UsageError
from grpo_core.rewards.pool import TIMEOUT, Failure, WorkerPool

INSTALL_HINT = 'the Ray reward backend needs Ray: pip install "grpo-core[ray]"'
PROBE_SECONDS = 3.0  # a head that does not accept a TCP connection in this long is taken as unreachable
GRACE = 300.0  # seconds an actor may stay silent past an item's limit (a worker importing sympy, a slow node)
DEPTH = 2  # items in an actor's queue: the one it runs and the next, which starts without a round trip
TRIES = 2  # an item whose actor dies is retried once on another actor

_connect_lock = threading.Lock()


def _ray():
    try:
        import ray
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    return ray


def _host_port(address: str) -> tuple[str, int]:
    bare = address.split("://", 1)[-1]
    host, colon, port = bare.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise UsageError(f"Ray address {address!r} is not HOST:PORT; pass the head node's address, e.g. 10.0.0.5:6379")
    return host.strip("[]"), int(port)


def connect(address: str | None = None) -> None:
    """Join the Ray cluster at ``address`` (``None``: start or join one on this machine), once per process.

    The head's port is probed first, so an unreachable address fails in seconds (``ray.init`` itself retries for
    minutes); raises ``UsageError`` for that and for Ray not being installed.
    """
    ray = _ray()
    with _connect_lock:
        if ray.is_initialized():
            return
        if address not in (None, "auto", "local"):
            host, port = _host_port(address)
            try:
                socket.create_connection((host, port), timeout=PROBE_SECONDS).close()
            except OSError as error:
                reason = error.strerror or type(error).__name__
                raise UsageError(f"cannot reach a Ray cluster at {address} ({reason}): start its head there with "
                                 f"`ray start --head`, or pass the address that command printed") from None
        try:
            ray.init(address=address, ignore_reinit_error=True, logging_level=logging.ERROR, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise UsageError(f"cannot join the Ray cluster at {address or 'this machine'} ({first}): check the "
                             f"address and that this machine runs the same Ray version as the cluster") from None


class _Pickled:
    """Pickles as the call that unpickles ``data``: a reward's function and arguments cross the actor still
    pickled and load only in its worker, so a module that fails to import fails there, as in the local pool."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __reduce__(self):
        return pickle.loads, (self.data,)


class _Scorer:
    """The Ray actor: one CPU of the cluster, scoring one item at a time in its own hard-limited worker."""

    def __init__(self, paths: list[str]) -> None:
        sys.path[:0] = [path for path in paths if path not in sys.path]  # the worker imports reward modules by name
        self._pool = WorkerPool(1)

    def run(self, func: bytes, args: bytes, kwargs: bytes, timeout: float) -> tuple[str, Any]:
        [result] = self._pool.map(_Pickled(func), [(_Pickled(args), _Pickled(kwargs))], timeout)
        if result is TIMEOUT:  # a sentinel does not survive the trip: it travels as a tag
            return "timeout", None
        if isinstance(result, Failure):
            return "failure", result.error
        return "ok", result

    def pids(self) -> tuple[int, list[int]]:
        return os.getpid(), self._pool.pids()


def _death_types(ray) -> tuple[type, ...]:
    errors = ray.exceptions
    return tuple(getattr(errors, name) for name in ("RayActorError", "WorkerCrashedError", "NodeDiedError",
                                                     "ObjectLostError", "LocalRayletDiedError") if hasattr(errors, name))


def _summary(error: BaseException) -> str:
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {first[:200]}" if first else type(error).__name__


@dataclass(eq=False)
class _Job:
    """One ``map`` call: its items, the results so far and the future its caller waits on."""

    func: Any  # the pickled function, stored once in Ray's object store for every item
    payloads: list  # (pickled args, pickled kwargs) per item
    timeout: float
    once_per_actor: bool = False  # warm-ups: each item on a different actor, never queued behind another
    results: list = field(default_factory=list)
    pending: deque = field(default_factory=deque)
    tries: list = field(default_factory=list)
    left: int = 0
    ran_on: set = field(default_factory=set)
    cancelled: bool = False
    future: Future = field(default_factory=Future)

    def __post_init__(self) -> None:
        self.results = [None] * len(self.payloads)
        self.pending = deque(range(len(self.payloads)))
        self.tries = [0] * len(self.payloads)
        self.left = len(self.payloads)

    def finish(self, index: int, value: Any) -> None:
        if self.cancelled or self.future.done():
            return
        self.results[index] = value
        self.left -= 1
        if not self.left:
            self.future.set_result(self.results)


@dataclass(eq=False)
class _Call:
    """An item sent to an actor: the first in its queue is running, the next waits behind it."""

    job: _Job
    index: int
    actor: "_Actor"
    result: Future | None = None  # the call's result, or the error Ray raised for it
    deadline: float = math.inf  # the first call's: from when it reached the front, its limit and GRACE


@dataclass(eq=False)
class _Actor:
    handle: Any
    calls: deque = field(default_factory=deque)


class RayPool:
    """``size`` Ray actors (one CPU each) with ``WorkerPool.map``'s contract; several threads may map at once.

    ``size`` (at most that many actors) defaults to the cluster's CPUs, so a process needs only one pool. Items
    whose actor dies are retried once on another actor and dead actors are replaced where a CPU is free;
    ``retries`` counts the items retried so far.
    """

    def __init__(self, address: str | None = None, size: int | None = None) -> None:
        connect(address)
        ray = _ray()
        self.size = size or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.retries = 0
        # absolute, with the driver's folder for '': an actor's working folder is another
        paths = list(dict.fromkeys(os.path.abspath(path or os.curdir) for path in sys.path))
        self._actor = ray.remote(num_cpus=1, max_restarts=0)(_Scorer).options(
            runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(paths)}})
        self._paths = paths
        self._lock = threading.Lock()
        self._actors: list[_Actor] = []  # their queues are the dispatcher thread's alone
        self._jobs: deque[_Job] = deque()  # jobs with items not yet handed out, served in turn so none starves
        self._open: set[_Job] = set()  # every job not yet answered, for close
        self._events: queue.SimpleQueue = queue.SimpleQueue()  # finished calls, and None to look at the jobs again
        self._thread: threading.Thread | None = None
        self._closed = False

    def map(self, func: Callable, calls: list[tuple[tuple, dict]], timeout: float) -> list[Any]:
        """Run ``func(*args, **kwargs)`` for each call; results are values, ``Failure`` or ``TIMEOUT``."""
        return self._run(func, calls, timeout)

    def _run(self, func: Callable, calls: list[tuple[tuple, dict]], timeout: float,
             once_per_actor: bool = False) -> list[Any]:
        if not calls:
            return []
        ray = _ray()
        job = _Job(ray.put(pickle.dumps(func)), [(pickle.dumps(args), pickle.dumps(kwargs)) for args, kwargs in calls],
                   float(timeout), once_per_actor)
        self._top_up(ray)
        with self._lock:
            if self._closed:
                raise RuntimeError("this RayPool is closed")
            self._jobs.append(job)
            self._open.add(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._dispatch, name="grpo-ray-pool", daemon=True)
                self._thread.start()
        self._events.put(None)
        try:
            return job.future.result()
        except BaseException:
            self._cancel(job)
            raise
        finally:
            with self._lock:
                self._open.discard(job)

    def _cancel(self, job: _Job) -> None:
        """Drop what is left of ``job``: its queued items never run; those on an actor finish there, unread."""
        with self._lock:
            if job.cancelled or job.future.done():
                return
            job.cancelled = True
            if job in self._jobs:
                self._jobs.remove(job)
        self._events.put(None)

    def _dispatch(self) -> None:
        ray = _ray()
        deaths = _death_types(ray)
        try:
            while not self._closed:
                for call in self._take():
                    self._send(call)
                deadline = min((actor.calls[0].deadline for actor in self._live() if actor.calls), default=math.inf)
                events = []
                try:  # sleep until a call finishes, a job comes or changes, or the first deadline
                    events.append(self._events.get(timeout=None if deadline == math.inf else
                                                   max(0.0, deadline - time.monotonic())))
                    while True:
                        events.append(self._events.get_nowait())
                except queue.Empty:
                    pass
                for call in events:
                    if call is not None:
                        self._receive(ray, deaths, call)
                self._expire(ray)
        except BaseException as error:  # never leave a caller waiting forever
            self._fail(RuntimeError(f"the Ray reward pool failed: {error!r}"))

    def _fail(self, error: Exception) -> None:
        with self._lock:
            self._closed = True
            jobs, self._open = self._open, set()
        for job in jobs:
            if not job.future.done():
                job.future.set_exception(error)

    def _live(self) -> list[_Actor]:
        with self._lock:
            return list(self._actors)

    def _take(self) -> list[_Call]:
        """Items to send now, one job's item after another's: each to an idle actor, else behind a busy one."""
        taken, waiting = [], []
        with self._lock:
            idle = [actor for actor in self._actors if not actor.calls]
            behind = [actor for actor in self._actors if 0 < len(actor.calls) < DEPTH]
            while self._jobs and (idle or behind):
                job = self._jobs.popleft()
                if job.once_per_actor:  # a fresh actor while there is one, else any idle one
                    fresh = [a for a in self._actors if id(a) not in job.ran_on]
                    actor = next((a for a in idle if a in fresh or not fresh), None)
                else:
                    actor = idle[0] if idle else behind[0]
                if actor is None:
                    waiting.append(job)
                    continue
                (idle if actor in idle else behind).remove(actor)
                if len(actor.calls) + 1 < DEPTH and not job.once_per_actor:
                    behind.append(actor)
                call = _Call(job, job.pending.popleft(), actor)
                actor.calls.append(call)  # counted now, so the next item looks at this actor's queue as it will be
                job.ran_on.add(id(actor))
                taken.append(call)
                if job.pending:
                    self._jobs.append(job)
            self._jobs.extend(waiting)
        return taken

    def _send(self, call: _Call) -> None:
        job = call.job
        ref = call.actor.handle.run.remote(job.func, *job.payloads[call.index], job.timeout)
        if call.actor.calls[0] is call:
            call.deadline = time.monotonic() + job.timeout + GRACE
        call.result = ref.future()
        call.result.add_done_callback(lambda _, call=call: self._events.put(call))

    def _receive(self, ray, deaths: tuple, call: _Call) -> None:
        actor = call.actor
        if call not in actor.calls:  # its actor was dropped since: the item went back to its job already
            return
        try:
            kind, value = call.result.result()
        except deaths as error:
            self._lost(ray, actor, _summary(error))
            return
        except ray.exceptions.RayError as error:  # the actor lives but its call failed: the item's error
            kind, value = "error", _summary(error)
        actor.calls.remove(call)
        if actor.calls and actor.calls[0].deadline == math.inf:
            actor.calls[0].deadline = time.monotonic() + actor.calls[0].job.timeout + GRACE
        result = TIMEOUT if kind == "timeout" else Failure(value) if kind in ("failure", "error") else value
        call.job.finish(call.index, result)

    def _expire(self, ray) -> None:
        now = time.monotonic()
        for actor in self._live():
            if actor.calls and actor.calls[0].deadline <= now:  # a hung actor or a lost node Ray has not noticed yet
                self._lost(ray, actor, f"no answer {GRACE:g} s past the item's limit")

    def _lost(self, ray, actor: _Actor, reason: str) -> None:
        """Drop a dead (or hung) actor: the item it ran counts a try, those queued behind it go back untried; a
        replacement starts where a CPU is free."""
        try:
            ray.kill(actor.handle, no_restart=True)
        except Exception:  # already gone
            pass
        with self._lock:
            if actor in self._actors:
                self._actors.remove(actor)
            calls, actor.calls = list(actor.calls), deque()
            for position, call in reversed(list(enumerate(calls))):
                job = call.job
                if job.cancelled or job.future.done():
                    continue
                if position == 0:
                    job.tries[call.index] += 1
                    if job.tries[call.index] >= TRIES:
                        job.finish(call.index, Failure(f"ray worker died on both tries at this item ({reason})"))
                        continue
                    self.retries += 1
                job.pending.appendleft(call.index)
                if job not in self._jobs:
                    self._jobs.appendleft(job)
            if self._closed:
                return
        self._top_up(ray)

    def _top_up(self, ray) -> None:
        """Start actors up to ``size``, but only as many as the cluster has free CPUs for: an actor that cannot be
        placed (its node is gone) would hold its items until the deadline. The pool grows back as CPUs return."""
        with self._lock:
            if self._closed:
                raise RuntimeError("this RayPool is closed")
            if len(self._actors) >= self.size:
                return
        free = int(ray.available_resources().get("CPU", 0))
        with self._lock:
            wanted = min(self.size - len(self._actors), free) if self._actors else max(1, free)
            for _ in range(max(0, min(wanted, self.size - len(self._actors)))):
                self._actors.append(_Actor(self._actor.remote(self._paths)))
        self._events.put(None)

    def warm(self, func: Callable, timeout: float) -> None:
        """Run ``func()`` once on each of up to ``size`` actors (each imports what it needs)."""
        self._run(func, [((), {})] * self.size, timeout, once_per_actor=True)

    def pids(self) -> list[tuple[int, list[int]]]:
        """Each actor's process id and its worker's (for tests and diagnostics; actors on this machine only)."""
        ray = _ray()
        return ray.get([actor.handle.pids.remote() for actor in self._live()])

    def close(self) -> None:
        """Kill the actors (their workers die with them); a map in progress raises."""
        ray = _ray()
        with self._lock:
            actors, self._actors = self._actors, []
        self._fail(RuntimeError("this RayPool was closed during a map"))
        self._events.put(None)
        for actor in actors:
            try:
                ray.kill(actor.handle, no_restart=True)
            except Exception:  # Ray already shut down
                pass
