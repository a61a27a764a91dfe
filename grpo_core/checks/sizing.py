"""Sizing a check to a slow reward: its seconds per completion timed on its first calls, then as many examples per
property as fit the time budget, and each property's share of that budget weighted by what it scores.

A reward whose whole check fits well inside the budget is checked as asked, with the same examples as without one.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from grpo_core.checks.executor import Hung
from grpo_core.checks.inputs import Inputs
from grpo_core.checks.registry import Planned
from grpo_core.checks.subject import Item, RewardUnderTest
from grpo_core.rewards.declared import Measure

FIT_SHARE = 0.5  # a check estimated under this share of the budget runs in full
PLAN_SHARE = 0.8  # a sized check plans this share of the budget; the rest is for calls slower than the timed ones
UNKNOWN_MEASURE_ITEMS = 10  # the completions a measure is taken to score when it does not say (Measure.items)
TIMED_CALLS = 2  # after the first call


def timing_texts(n: int) -> list[str]:
    """Completions no cache has seen (a judge keeps its verdicts on disk), so the calls time the reward itself."""
    start = random.SystemRandom().randrange(10**6, 10**7)
    return [f"The answer is {start + i}." for i in range(n)]


@dataclass
class Sizing:
    """The reward's timed seconds per completion and the examples each property draws to fit the budget."""

    latency: float
    examples: int
    asked: int  # --max-examples

    @property
    def shortened(self) -> bool:
        return self.examples < self.asked

    def note(self, message: str = "") -> str:
        why = (f"checked only in part: {self.examples} example{'s' * (self.examples != 1)} instead of {self.asked}, "
               f"sized to the time budget (--budget) at the {self.latency:.2g} s per completion the reward took")
        return why + (f"; {message}" if "time budget" in message else "")


def items(planned: Planned, examples: int) -> float:
    """About how many completions ``planned`` scores with ``examples`` examples."""
    target = planned.target
    declared = (target.items or UNKNOWN_MEASURE_ITEMS) if isinstance(target, Measure) else 0
    return planned.prop.cost * examples + planned.prop.fixed + declared


def time_first_calls(subject: RewardUnderTest, inputs: Inputs) -> tuple[float | None, float]:
    """(seconds per completion, seconds of the first call): a first call starts what the reward starts (a judge's
    server, a model), then two more are timed. None when no row could be drawn, or the reward hung (left in
    ``subject.hung``, for the time property to report)."""
    started = time.monotonic()
    try:
        drawn = inputs.drawn(inputs.batches(shapes=("plain",)), 1)
    except Exception:  # a property reports a strategy that cannot draw
        return None, time.monotonic() - started
    if not drawn:
        return None, time.monotonic() - started
    vi, batch, _ = drawn[0]
    columns, prompt = (batch[0].columns, batch[0].prompt) if batch else ({}, "")
    timeouts = subject.timeouts  # the time property counts the properties' own calls only
    first = 0.0
    texts = timing_texts(1 + TIMED_CALLS)
    try:
        subject.call(vi, [Item(texts[0], columns, prompt)])
        first = time.monotonic() - started
        timed = time.monotonic()
        for text in texts[1:]:
            subject.call(vi, [Item(text, columns, prompt)])
        return (time.monotonic() - timed) / TIMED_CALLS, first
    except Hung as error:
        subject.hung = error
        return None, first or time.monotonic() - started
    finally:
        subject.timeouts = timeouts


def plan(budgeted: list[Planned], latency: float, seconds: float, asked: int) -> Sizing | None:
    """The examples per property that fit ``seconds`` at ``latency`` s per completion; None when all ``asked`` do."""
    runs = [p for p in budgeted if not p.undeclared]
    if latency * sum(items(p, asked) for p in runs) <= FIT_SHARE * seconds:
        return None
    per_example = sum(p.prop.cost for p in runs)
    fixed = sum(items(p, 0) for p in runs)
    fit = int((PLAN_SHARE * seconds / max(latency, 1e-9) - fixed) / per_example) if per_example else asked
    return Sizing(latency, max(1, min(asked, fit)), asked)


def share(budgeted: list[Planned], index: int, sizing: Sizing | None, now: float, deadline: float) -> float:
    """When ``budgeted[index]`` must stop: an equal share of the time left, or, for a sized check, a share weighted
    by the completions each property left scores."""
    left = [p for p in budgeted[index:] if not p.undeclared] or budgeted[index:]
    if sizing is None:
        return now + (deadline - now) / (len(budgeted) - index)
    weights = [items(p, sizing.examples) for p in left]
    total = sum(weights)
    own = items(budgeted[index], sizing.examples)
    return now + (deadline - now) * (own / total if total else 1 / len(left))
