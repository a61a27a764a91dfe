"""Module-level functions for the Ray pool's tests: its workers import them by name, as the local pool's do."""

import os
import signal
import time


def square(x):
    return x * x


def slow_square(x, seconds=0.3):
    time.sleep(seconds)
    return x * x


def reject(x):
    raise ValueError(f"no score for {x}")


def hang(x):
    time.sleep(600)
    return x


def spin(x, seconds=0.02):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    return x


def kill_my_actor(x):
    """Kill the process that started this worker: on the Ray backend, the actor holding it."""
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(600)
    return x


def mixed(kind, x):
    """One batch of values, errors and hangs: ``kind`` names the fixture to call."""
    return {"square": square, "reject": reject, "hang": hang}[kind](x)
