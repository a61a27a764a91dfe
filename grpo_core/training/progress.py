"""What a run says about where it is: whether its output is a terminal, a plain line per logged step where it is not,
and durations in words."""

from __future__ import annotations

import math
import sys


def is_terminal(stream=None) -> bool:
    """Whether ``stream`` (stdout) is a terminal, where a live progress bar can redraw itself; a pipe, a file, a CI log
    or a notebook gets plain lines instead."""
    stream = stream or sys.stdout
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


def duration(seconds: float) -> str:
    """``38 s``, ``4 min 12 s``, ``1 h 05 min``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def number(value, spec: str) -> str:
    """A logged value as shown: a step where nothing was scored logs None or NaN, shown ``-``."""
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return "-"
    return format(value, spec)


def stats(logs: dict) -> str:
    """A logged step's reward, its spread and (when logged) the KL, as the progress bar shows them."""
    text = f"reward {number(logs.get('reward'), '.3f')}  std {number(logs.get('reward_std'), '.3f')}"
    if "kl" in logs:
        text += f"  kl {number(logs['kl'], '.3g')}"
    return text


def step_line(step: int, max_steps: int, logs: dict, elapsed: float, done: int) -> str:
    """The plain line of a logged step: step, reward, std (and KL), time since training started, and time left
    estimated from the ``done`` steps this session has trained in ``elapsed`` seconds."""
    left = duration(elapsed / done * max(0, max_steps - step)) if done > 0 else "-"
    return f"step {step}/{max_steps}  {stats(logs)}  elapsed {duration(elapsed)}  left {left}"
