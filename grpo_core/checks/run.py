"""Running the checks: the plan of properties for one reward, the hypothesis driver, the time budget."""

from __future__ import annotations

import math
import random
import time
from typing import Callable

from grpo_core.checks.audit import Audit
from grpo_core.checks.catalogue import PROPERTIES
from grpo_core.checks.display import first_line
from grpo_core.checks.executor import Hung, OutOfTime
from grpo_core.checks.inputs import Inputs
from grpo_core.checks.properties import GenericProperties
from grpo_core.checks.report import FAIL, PASS, SKIP, CheckReport, PropertyResult
from grpo_core.checks.subject import DEFAULT_ITEM_TIMEOUT_S, RewardUnderTest
from grpo_core.rewards.reward import Reward

DEFAULT_MAX_EXAMPLES = 20
PREFLIGHT_MAX_EXAMPLES = 8
DATASET_ROWS = 200  # rows a check reads from a dataset: enough to count the rows a reward cannot use, quick to read


def dataset_rows(dataset, n: int = DATASET_ROWS) -> list[dict]:
    """The first ``n`` rows of a ``datasets.Dataset`` as dicts: what preflight and ``grpo-run check --dataset``
    check the rewards on."""
    return [dict(row) for row in dataset.select(range(min(len(dataset), n)))]


def run_checks(
    rewards: list[Reward],
    max_examples: int = DEFAULT_MAX_EXAMPLES,
    seed: int | None = None,
    rows: list[dict] | None = None,
    budget_s: float | None = None,
    vary_params: bool = True,
    item_timeout_s: float = DEFAULT_ITEM_TIMEOUT_S,
) -> CheckReport:
    """Run every property on every reward and collect the results.

    ``rewards`` are bound rewards as ``load_rewards`` returns them. ``rows`` are real dataset rows
    (dicts of the dataset's columns); without them, columns come from each reward's ``rows``
    strategy, or are drawn as text. ``budget_s`` caps the whole run: the time is shared out between
    rewards and properties, and a property that runs out of time passes on the examples it ran.
    ``vary_params`` also draws parameter values other than the bound ones (choices, booleans,
    numbers halved and doubled). ``seed`` makes the run reproducible; without one a seed is
    drawn and recorded in the report.
    """
    start = time.monotonic()
    seed = random.randrange(2**32) if seed is None else seed
    end = start + budget_s if budget_s is not None else math.inf
    report = CheckReport(seed=seed)
    rows = list(rows) if rows else None
    for index, reward in enumerate(rewards):
        now = time.monotonic()
        reward_deadline = now + (end - now) / (len(rewards) - index)
        check = RewardCheck(reward, max_examples, seed, rows, vary_params, item_timeout_s)
        report.params[reward.spec.name] = dict(reward.params)
        try:
            report.results.extend(check.run(reward_deadline))
        finally:
            check.close()
    report.seconds = time.monotonic() - start
    return report


def preflight(rewards: list[Reward], rows: list[dict] | None, budget_s: float = 10.0, seed: int = 0) -> CheckReport:
    """The quick check training runs first: the selected rewards and parameters on real dataset rows.

    About ``budget_s`` seconds for all rewards together; stop training when ``not report.ok``.
    """
    return run_checks(
        rewards,
        max_examples=PREFLIGHT_MAX_EXAMPLES,
        seed=seed,
        rows=rows,
        budget_s=budget_s,
        vary_params=False,
    )


class Violation(Exception):
    """A property does not hold for this example (hypothesis shrinks it)."""

    def __init__(self, message: str, example: dict) -> None:
        super().__init__(message)
        self.message = message
        self.example = example


class RewardCheck(RewardUnderTest, Inputs, GenericProperties, Audit):
    """Every property on one reward: the reward under test, the inputs drawn for it, the properties, the audit."""

    def run(self, deadline: float) -> list[PropertyResult]:
        plan: list[tuple[str, Callable]] = []
        missing = self._missing_columns()
        if missing:
            return [self._result("columns", FAIL, missing)]
        plan += [("output", self.check_output), ("bounds", self.check_bounds), ("gold", self.check_gold)]
        for direction in self.spec.checks.directions:
            plan.append((f"direction: {direction.description}", lambda d, direction=direction: self.check_direction(direction, d)))
        if not self.spec.checks.directions:
            plan.append(("direction", None))
        plan.append(("degenerate", self.check_degenerate))  # before hostile, whose slow texts can spend the budget
        plan += [("deterministic", self.check_deterministic), ("batch-independent", self.check_batch),
                 ("shapes", self.check_shapes), ("hostile", self.check_hostile)]
        if self.reward.columns:
            plan.append(("rows", self.check_rows))
        results: list[PropertyResult] = []
        hung: Hung | None = None
        for index, (name, runner) in enumerate(plan):
            if hung is not None:
                results.append(self._result(name, SKIP, "not run: the reward hung (see time)"))
                continue
            reason = self._skip_reason(name, runner, results)
            if reason:
                results.append(self._result(name, SKIP, reason))
                continue
            now = time.monotonic()
            share = now + (deadline - now) / (len(plan) - index)
            started = now
            try:
                result = runner(share)
            except Hung as error:
                hung = error
                result = self._result(name, SKIP, "interrupted: the reward hung (see time)")
            result.seconds = time.monotonic() - started
            results.append(result)
        results.append(self._time_result(hung))
        return results

    def _skip_reason(self, name: str, runner, results: list[PropertyResult]) -> str:
        if name == "direction":
            return "the reward declares no directions"
        if name == "batch-independent" and self.spec.group_relative:
            return "the reward declares group_relative=True: its scores depend on the batch by design"
        if name in ("batch-independent", "shapes"):
            deterministic = next((r for r in results if r.property == "deterministic"), None)
            if deterministic is not None and deterministic.status == FAIL:
                return "not run: scores are not deterministic (see deterministic), so comparing calls says nothing"
        return ""

    def _missing_columns(self) -> str:
        if not self.rows:
            return ""
        present = set().union(*(row.keys() for row in self.rows))
        missing = [(name, source) for name, source in self.reward.columns.items()
                   if source not in present and name not in self.reward.optional]
        if not missing:
            return ""
        name, source = missing[0]
        hint = (f"set --reward-arg {self.name}.{name}_column=COLUMN"
                if any(p.name == f"{name}_column" for p in self.spec.params) else "use a dataset that has it")
        return (f"the dataset has no column '{source}', which reward '{self.name}' reads; "
                f"its columns: {', '.join(sorted(present)) or '(none)'}; {hint}")

    def _result(self, prop: str, status: str, message: str = "", counterexample=None, examples: int = 0) -> PropertyResult:
        return PropertyResult(self.name, prop, status, message, counterexample, examples)

    def _describe(self, prop: str, **values) -> str:
        text = PROPERTIES[prop]
        return text.format(bounds=f"[{self.lo:g}, {self.hi:g}]", seconds=self._time_limit(), **values)

    def _time_limit(self) -> float:
        return self.reward.timeout if self.reward.timeout is not None else self.item_timeout_s

    def _violation(self, prop: str, detail: str, example: dict, **values) -> Violation:
        label = "direction" if prop == "direction" else prop
        return Violation(f"{label} violated: {self._describe(prop, **values)}; {detail}", example)

    def _time_result(self, hung: Hung | None) -> PropertyResult:
        if hung is not None:
            what = "no score" if hung.items == 1 else f"no scores for a batch of {hung.items}"
            message = (f"time violated: {self._describe('time')}; {what} after {hung.seconds:.1f} s. "
                       f"Make it faster, or declare RewardSpec(timeout=...) so it runs under a hard limit")
            return self._result("time", FAIL, message, hung.example)
        note = ""
        if self.timeouts:
            note = (f"{self.timeouts} completion{'s' * (self.timeouts != 1)} hit the reward's own "
                    f"{self.reward.timeout:g} s timeout and scored None")
        return self._result("time", PASS, note)

    def _hypothesis(self, prop: str, strategy, check: Callable, deadline: float, counters: dict | None = None,
                    max_examples: int | None = None) -> PropertyResult:
        """Run ``check`` on examples drawn from ``strategy``; a failure is shrunk to a minimal example."""
        from hypothesis import HealthCheck, Verbosity, given, settings
        from hypothesis import seed as seed_decorator

        state = {"examples": 0, "violations": []}

        def test(example):
            if time.monotonic() > deadline:
                raise OutOfTime()
            state["examples"] += 1
            try:
                check(example)
            except Violation as violation:
                state["violations"].append(violation)
                raise

        run = seed_decorator(self.seed)(
            settings(
                max_examples=max_examples or self.max_examples,
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
                    return self._result(prop, SKIP, "not run: the time budget was spent")
                return self._vacuous(prop, counters, n()) or self._result(
                    prop, PASS, f"stopped after {n()} examples: the time budget was spent", examples=n())
        except Violation:
            pass
        except Exception as error:
            if not state["violations"]:
                return self._result(prop, FAIL, f"the check could not run: {type(error).__name__}: {first_line(error)}",
                                    examples=n())
        if state["violations"]:
            violation = state["violations"][-1]  # hypothesis replays the shrunk example last
            return self._result(prop, FAIL, violation.message, violation.example, n())
        return self._vacuous(prop, counters, n()) or self._result(prop, PASS, examples=n())

    def _vacuous(self, prop: str, counters: dict | None, n: int) -> PropertyResult | None:
        if counters is None or counters.get("scored", 1) or not n:
            return None
        # A reward that scores nothing teaches nothing: where that is the finding, the property fails.
        return self._result(prop, FAIL if counters.get("fail") else SKIP,
                            counters.get("reason", "no completion could be scored: every score was None"), examples=n)

    # the properties
