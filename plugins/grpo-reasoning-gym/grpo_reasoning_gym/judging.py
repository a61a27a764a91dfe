"""Task checkers that may be slow on hostile text, run in grpo-core's worker processes under a per-item limit.

Items travel in chunks, one call per chunk, so a batch costs a few round trips instead of one per
item. A chunk must finish within the per-item limit; one that does not (an item hangs, or the chunk
was too large) is cut off and its items are judged again one call each, under the same limit. So an
item that is scored took at most the limit, and an item that times out took longer than the limit
on its own. Chunks are sized from the measured cost per item to take a small share of the limit.

Importing this module imports reasoning_gym, so a fresh worker does it while loading the function
(under grpo-core's load allowance), not inside an item's deadline.
"""

from __future__ import annotations

import math
import time

import reasoning_gym.factory  # noqa: F401  (see the module docstring)
from grpo_core import Unscored, run_with_timeouts

from grpo_reasoning_gym.entries import load_entry
from grpo_reasoning_gym.rules import checker_score

CHUNK_SHARE = 0.1  # a chunk is sized to take this share of the per-item limit
FIRST_GUESS_S = 0.005  # seconds per item before any chunk has been timed
WORKERS = 2  # chunks per batch at least, so grpo-core's two workers share it

_seconds_per_item = FIRST_GUESS_S


def judge_item(task: str, entry: str, prediction: str) -> float:
    """The task checker's score for one answer (run in a worker)."""
    return checker_score(task, load_entry(entry), prediction)


def judge_chunk(items: list[tuple[str, str, str]]) -> tuple[list[float], float]:
    """The checker's score for each ``(task, entry, prediction)``, and the seconds the chunk took (in a worker)."""
    start = time.perf_counter()
    scores = [judge_item(*item) for item in items]
    return scores, time.perf_counter() - start


def judge_in_workers(items: list[tuple[str, str, str]], timeout: float) -> list:
    """The checker's score for each item, or ``Unscored("timeout", score=0.0)`` / ``Unscored("error")``."""
    global _seconds_per_item
    results: list = [None] * len(items)
    per_chunk = max(1, int(CHUNK_SHARE * timeout / _seconds_per_item))
    size = min(per_chunk, math.ceil(len(items) / WORKERS))
    chunks = [list(range(i, min(i + size, len(items)))) for i in range(0, len(items), size)]
    calls = [(([items[j] for j in chunk],), {}) for chunk in chunks]
    again: list[int] = []
    for chunk, result in zip(chunks, run_with_timeouts(judge_chunk, calls, timeout)):
        if isinstance(result, Unscored):  # cut off (or its worker died): judge its items one by one
            again.extend(chunk)
            if result.reason == "timeout":
                _seconds_per_item = max(_seconds_per_item, timeout / len(chunk))
            continue
        scores, seconds = result
        _seconds_per_item = max(0.5 * _seconds_per_item + 0.5 * seconds / len(chunk), 1e-6)
        for j, score in zip(chunk, scores):
            results[j] = score
    if again:
        for j, result in zip(again, run_with_timeouts(judge_item, [(items[j], {}) for j in again], timeout)):
            if isinstance(result, Unscored) and result.reason == "timeout":  # too costly to judge: not paid
                result = Unscored("timeout", f"the task checker took longer than {timeout:g} s", score=0.0)
            results[j] = result
    return results
