"""Scoring on a Ray cluster, with the worker pool's contract: values, ``Failure`` or ``TIMEOUT``, in order.

Each Ray actor (one CPU) holds a local one-worker ``WorkerPool``, so a call that hangs, even inside C, is
killed at its deadline exactly as on one machine. The driver hands items to actors one at a time as they free
up. An actor or node that dies takes its item with it: the item is retried once on another actor, then it is a
``Failure``, never a missing or zero score. Ray is an optional extra (``grpo-core[ray]``), imported only inside
this module's functions, so ``import grpo_core`` never loads it.
"""

from __future__ import annotations

import itertools
import logging
import os
import pickle
import socket
import sys
import threading
import time
from collections import deque
from typing import Any, Callable

from grpo_core.errors import UsageError
from grpo_core.rewards.pool import TIMEOUT, Failure, WorkerPool

INSTALL_HINT = 'the Ray reward backend needs Ray: pip install "grpo-core[ray]"'
PROBE_SECONDS = 3.0  # a head that does not accept a TCP connection in this long is taken as unreachable
GRACE = 300.0  # seconds an actor may stay silent past an item's limit (a worker importing sympy, a slow node)
POLL = 0.05  # while other maps hold every actor, how often a map looks for one they gave back
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
        self._cond = threading.Condition()
        self._actors: list = []
        self._idle: list = []
        self._queue: deque = deque()  # maps waiting for an actor, served in turn so none starves
        self._tickets = itertools.count()
        self._closed = False

    def map(self, func: Callable, calls: list[tuple[tuple, dict]], timeout: float) -> list[Any]:
        """Run ``func(*args, **kwargs)`` for each call; results are values, ``Failure`` or ``TIMEOUT``."""
        if not calls:
            return []
        ray = _ray()
        deaths = _death_types(ray)
        func_ref = ray.put(pickle.dumps(func))  # stored once, shared by every item of the batch
        payloads = [(pickle.dumps(args), pickle.dumps(kwargs)) for args, kwargs in calls]
        self._top_up(ray)
        ticket = next(self._tickets)
        results: list[Any] = [None] * len(calls)
        tries = [0] * len(calls)
        pending = deque(range(len(calls)))
        running: dict = {}  # object ref -> (actor, index, deadline)
        try:
            while pending or running:
                while pending:
                    actor = self._take(ticket, block=not running)
                    if actor is None:
                        break
                    index = pending.popleft()
                    ref = actor.run.remote(func_ref, *payloads[index], timeout)
                    running[ref] = (actor, index, time.monotonic() + timeout + GRACE)
                wait = min(deadline for *_, deadline in running.values()) - time.monotonic()
                if pending:
                    wait = min(wait, POLL)
                ready, _ = ray.wait(list(running), num_returns=1, timeout=max(0.0, wait))
                for ref in ready:
                    actor, index, _ = running.pop(ref)
                    try:
                        kind, value = ray.get(ref)
                    except deaths as error:
                        self._lost(ray, actor)
                        self._retry(index, tries, pending, results, _summary(error))
                        continue
                    except ray.exceptions.RayError as error:  # the actor lives but its call failed: the item's error
                        self._give(actor)
                        results[index] = Failure(_summary(error))
                        continue
                    self._give(actor)
                    results[index] = TIMEOUT if kind == "timeout" else Failure(value) if kind == "failure" else value
                now = time.monotonic()
                for ref, (actor, index, deadline) in list(running.items()):
                    if deadline <= now:  # a hung actor or a lost node that Ray has not noticed yet
                        del running[ref]
                        self._lost(ray, actor)
                        self._retry(index, tries, pending, results, f"no answer {GRACE:g} s past the item's limit")
        finally:
            with self._cond:
                if ticket in self._queue:
                    self._queue.remove(ticket)
                    self._cond.notify_all()
            for actor, *_ in running.values():  # calls cut off by an exception: their actors finish and rejoin
                self._give(actor)
        return results

    def _retry(self, index: int, tries: list[int], pending: deque, results: list, reason: str) -> None:
        tries[index] += 1
        if tries[index] < TRIES:
            with self._cond:
                self.retries += 1
            pending.appendleft(index)
        else:
            results[index] = Failure(f"ray worker died on both tries at this item ({reason})")

    def _top_up(self, ray) -> None:
        """Start actors up to ``size``, but only as many as the cluster has free CPUs for: an actor that cannot be
        placed (its node is gone) would hold its items until the deadline. The pool grows back as CPUs return."""
        with self._cond:
            if self._closed:
                raise RuntimeError("this RayPool is closed")
            if len(self._actors) >= self.size:
                return
        free = int(ray.available_resources().get("CPU", 0))
        with self._cond:
            wanted = min(self.size - len(self._actors), free) if self._actors else max(1, free)
            for _ in range(max(0, min(wanted, self.size - len(self._actors)))):
                actor = self._actor.remote(self._paths)
                self._actors.append(actor)
                self._idle.append(actor)
            self._cond.notify_all()

    def _take(self, ticket: int, block: bool):
        """An idle actor when this map's turn comes; ``None`` at once when not blocking and none is free for it."""
        with self._cond:
            if ticket not in self._queue:
                self._queue.append(ticket)
            while not (self._idle and self._queue[0] == ticket):
                if self._closed:
                    raise RuntimeError("this RayPool was closed during a map")
                if not block:
                    return None
                self._cond.wait()
            self._queue.popleft()
            self._cond.notify_all()
            return self._idle.pop()

    def _give(self, actor) -> None:
        with self._cond:
            if actor in self._actors and actor not in self._idle:
                self._idle.append(actor)
                self._cond.notify_all()

    def _lost(self, ray, actor) -> None:
        """Drop a dead (or hung) actor and start a replacement where a CPU is free."""
        try:
            ray.kill(actor, no_restart=True)
        except Exception:  # already gone
            pass
        with self._cond:
            if actor in self._actors:
                self._actors.remove(actor)
            if actor in self._idle:
                self._idle.remove(actor)
            if self._closed:
                return
        self._top_up(ray)

    def warm(self, func: Callable, timeout: float) -> None:
        """Run ``func()`` ``size`` times, once on each actor when all are free (each imports what it needs)."""
        self.map(func, [((), {})] * self.size, timeout)

    def pids(self) -> list[tuple[int, list[int]]]:
        """Each actor's process id and its worker's (for tests and diagnostics; actors on this machine only)."""
        ray = _ray()
        with self._cond:
            actors = list(self._actors)
        return ray.get([actor.pids.remote() for actor in actors])

    def close(self) -> None:
        """Kill the actors (their workers die with them); a map in progress raises."""
        ray = _ray()
        with self._cond:
            self._closed = True
            actors, self._actors, self._idle = self._actors, [], []
            self._cond.notify_all()
        for actor in actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # Ray already shut down
                pass
