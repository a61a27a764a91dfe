"""The search for a counterexample: a property's check run on drawn examples by hypothesis (a failure shrunk to
the smallest), and how a broken promise is worded."""

from __future__ import annotations

import time
from typing import Callable

from grpo_core.checks.display import first_line
from grpo_core.checks.executor import OutOfTime
from grpo_core.checks.inputs import Inputs
from grpo_core.checks.registry import Property
from grpo_core.checks.results import FAIL, PASS, SKIP, PropertyResult
from grpo_core.checks.subject import RewardUnderTest


class Violation(Exception):
    """A property does not hold for this example (hypothesis shrinks it)."""

    def __init__(self, message: str, example: dict) -> None:
        super().__init__(message)
        self.message = message
        self.example = example


def describe(prop: Property, subject: RewardUnderTest, **values) -> str:
    """``prop``'s promise for this reward: its bounds, its time limit and ``values`` filled in."""
    return prop.promise.format(bounds=f"[{subject.lo:g}, {subject.hi:g}]", seconds=subject.time_limit(), **values)


def violation(prop: Property, subject: RewardUnderTest, detail: str, example: dict, **values) -> Violation:
    return Violation(f"{prop.name} violated: {describe(prop, subject, **values)}; {detail}", example)


UNDRAWABLE = ("no example could be drawn: the strategy's filter or assume() refused every one tried; a strategy that "
              "filters on the reward's own scores refuses them all when the reward gives every completion the same "
              "score")


def search(name: str, subject: RewardUnderTest, inputs: Inputs, strategy, check: Callable, deadline: float,
           counters: dict | None = None) -> PropertyResult:
    """Run ``check`` on examples drawn from ``strategy``; a failure is shrunk to a minimal example. ``counters``
    says how many completions were scored: a property that scored none passes on nothing (see ``vacuous``)."""
    from hypothesis import HealthCheck, Verbosity, given, settings
    from hypothesis import seed as seed_decorator
    from hypothesis.errors import Unsatisfiable

    state = {"examples": 0, "violations": []}

    def test(example):
        if time.monotonic() > deadline:
            raise OutOfTime()
        subject.progress.example(state["examples"])
        state["examples"] += 1
        try:
            check(example)
        except Violation as found:
            state["violations"].append(found)
            raise

    run = seed_decorator(inputs.seed)(
        settings(
            max_examples=inputs.max_examples,
            database=None,
            deadline=None,
            derandomize=False,
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet,
            report_multiple_bugs=False,
            print_blob=False,
        )(given(strategy)(test))
    )
    n = lambda: state["examples"]  # noqa: E731
    try:
        run()
    except OutOfTime:
        if not state["violations"]:
            if not n():
                return subject.result(name, SKIP, "not run: the time budget was spent")
            return vacuous(name, subject, counters, n(), inputs.max_examples < inputs.asked) or subject.result(
                name, PASS, f"stopped after {n()} examples: the time budget was spent", examples=n())
    except Violation:
        pass
    except Unsatisfiable:
        if not state["violations"]:
            return subject.result(name, FAIL, UNDRAWABLE, examples=n())
    except Exception as error:
        if not state["violations"]:
            return subject.result(name, FAIL, f"the check could not run: {type(error).__name__}: {first_line(error)}",
                                  examples=n())
    if state["violations"]:
        found = state["violations"][-1]  # hypothesis replays the shrunk example last
        return subject.result(name, FAIL, found.message, found.example, n())
    return vacuous(name, subject, counters, n(), inputs.max_examples < inputs.asked) or subject.result(name, PASS, examples=n())


def vacuous(name: str, subject: RewardUnderTest, counters: dict | None, n: int,
            shortened: bool = False) -> PropertyResult | None:
    if counters is None or counters.get("scored", 1) or not n:
        return None
    if shortened and counters.get("fail"):  # a few examples, all unscored, do not show that it never scores
        return subject.result(name, SKIP, f"not run in full: no completion of the {n} example{'s' * (n != 1)} the "
                              "time budget (--budget) left room for could be scored, too few to say it never scores",
                              examples=n)
    # A reward that scores nothing teaches nothing: where that is the finding, the property fails.
    return subject.result(name, FAIL if counters.get("fail") else SKIP,
                          counters.get("reason", "no completion could be scored: every score was None"), examples=n)
