"""Running the checks: the plan of properties for each reward, and the time budget shared between them."""

from __future__ import annotations

import math
import random
import time

from grpo_core.checks.catalogue import REGISTRY
from grpo_core.checks.executor import Hung
from grpo_core.checks.inputs import Inputs
from grpo_core.checks.progress import Quiet
from grpo_core.checks.registry import Planned, Registry
from grpo_core.checks.results import FAIL, PASS, SKIP, WARN, CheckReport, PropertyResult
from grpo_core.checks.sizing import Sizing, share, time_first_calls
from grpo_core.checks.sizing import plan as plan_sizes
from grpo_core.checks.subject import DEFAULT_ITEM_TIMEOUT_S, RewardUnderTest
from grpo_core.checks.texts import DEFAULT_MAX_COMPLETION_LENGTH
from grpo_core.rewards.reward import Reward

DEFAULT_MAX_EXAMPLES = 20
PREFLIGHT_MAX_EXAMPLES = 8
DEFAULT_BUDGET_S = 180.0  # grpo-run check's time for each reward, its first call aside
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
    progress: Quiet | None = None,
    fit_budget: bool = True,
    max_completion_length: int = DEFAULT_MAX_COMPLETION_LENGTH,
) -> CheckReport:
    """Run every property on every reward and collect the results.

    ``rewards`` are bound rewards as ``load_rewards`` returns them. ``rows`` are real dataset rows
    (dicts of the dataset's columns); without them, columns come from each reward's ``rows``
    strategy, or are drawn as text. ``budget_s`` caps the whole run: the time is shared out between
    rewards and properties, and a property that runs out of time passes on the examples it ran; a reward too slow
    for every example in its share is timed on its first calls (which do not count against it) and checked on
    fewer examples, which the report says (``sizing``), and a plugin's measure that would not finish is not started;
    ``fit_budget=False`` leaves that out (preflight: a run's measures must finish). ``max_completion_length``
    (tokens) sizes the long hostile texts to what a run can generate. ``progress``
    (``progress.Progress``) shows how far it is.
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
        subject = RewardUnderTest(reward, vary_params, item_timeout_s)
        subject.progress = progress or Quiet()
        subject.fit_budget = fit_budget
        subject.max_completion_length = max_completion_length
        report.params[reward.spec.name] = dict(reward.params)
        try:
            report.results.extend(check_one(subject, Inputs(subject, rows, seed, max_examples), reward_deadline))
        finally:
            subject.close()
    report.seconds = time.monotonic() - start
    return report


# Findings training's preflight reports as warnings and trains on: a format reward that pays empty tags (TRL's own
# think_format_reward does) teaches a policy to skip the reasoning, which a user may choose to accept.
PREFLIGHT_WARNINGS = ("empty-tags",)


def preflight(rewards: list[Reward], rows: list[dict] | None, budget_s: float = 10.0, seed: int = 0,
              max_completion_length: int = DEFAULT_MAX_COMPLETION_LENGTH) -> CheckReport:
    """The quick check training runs first: the selected rewards and parameters on real dataset rows, hostile text
    sized to the run's ``max_completion_length``.

    About ``budget_s`` seconds for all rewards together; stop training when ``not report.ok``.
    """
    report = run_checks(
        rewards,
        max_examples=PREFLIGHT_MAX_EXAMPLES,
        seed=seed,
        rows=rows,
        budget_s=budget_s,
        vary_params=False,
        fit_budget=False,
        max_completion_length=max_completion_length,
    )
    for result in report.results:  # what a policy may game without the run being wrong: said, not stopped
        if result.property in PREFLIGHT_WARNINGS and result.status == FAIL:
            result.status = WARN
    return report


def check_one(subject: RewardUnderTest, inputs: Inputs, deadline: float,
              registry: Registry = REGISTRY) -> list[PropertyResult]:
    """Every property of ``registry`` on one reward, in the plan's order; the "budget" stage shares the time
    until ``deadline``; a hung call stops the property it hung in, and the rest too unless its worker process was
    killed with it (the "last" stage then says so)."""
    plan = registry.plan(subject)
    for planned in [p for p in plan if p.prop.stage == "first"]:
        result = _run(planned, subject, inputs, math.inf)
        if result is not None and result.status == FAIL:
            return [result]
    budgeted = [p for p in plan if p.prop.stage == "budget"]
    sizing: Sizing | None = None
    if subject.fit_budget and deadline != math.inf and budgeted:
        subject.progress.stage(subject.name, "timing its first calls")
        subject.latency, first = time_first_calls(subject, inputs)
        deadline += first  # what the first call starts (a judge's server) is not the properties' time
        if subject.latency is not None:
            sizing = plan_sizes(budgeted, subject.latency, deadline - time.monotonic(), inputs.max_examples)
            if sizing is not None:
                subject.progress.slow()
    subject.budget_end, subject.sized = (deadline if subject.fit_budget else math.inf), sizing
    sized = inputs.sized(sizing.examples) if sizing is not None else inputs
    hangs = 0
    for index, planned in enumerate(budgeted):
        # A hang in a worker process ended with the worker: the other properties run on, until a second hang says
        # it hangs on anything. One in a thread may still hold the interpreter, so nothing more is run.
        if subject.hung is not None and (subject.executor.mode != "process" or hangs > 1):
            subject.results.append(subject.result(planned.name, SKIP, "not run: the reward hung (see time)"))
            continue
        if planned.undeclared:
            note = f"not checked, the reward declares none; {planned.prop.declare}"
            subject.results.append(subject.result(planned.name, SKIP, planned.prop.undeclared, note=note))
            continue
        reason = planned.prop.skip(subject)
        if reason:
            subject.results.append(subject.result(planned.name, SKIP, reason))
            continue
        now = time.monotonic()
        one = subject.fit_budget and subject.latency and planned.prop.cost * subject.latency
        if one and one > deadline - now:
            subject.results.append(subject.result(planned.name, SKIP, (
                f"not run: one example scores about {planned.prop.cost:g} completions, about {one:.0f} s at the "
                f"{subject.latency:.2g} s per completion the reward took, more than the {max(deadline - now, 0):.0f} s "
                f"left of the time budget (--budget)")))
            continue
        subject.progress.stage(subject.name, f"{planned.name} ({index + 1} of {len(budgeted)})",
                               sized.max_examples if planned.prop.cost else 0)
        try:
            result = _run(planned, subject, sized, share(budgeted, index, sizing, now, deadline))
        except Hung as error:
            subject.hung, hangs = subject.hung or error, hangs + 1  # the first hang is the one time reports
            result = subject.result(planned.name, SKIP, "interrupted: the reward hung (see time)")
            result.seconds = time.monotonic() - now
        if result is None:  # it found the reward outside its concern once it looked (empty-tags: no tags paid)
            continue
        if sizing is not None and sizing.shortened and planned.prop.cost and result.status == PASS and not result.note:
            result.note = sizing.note(result.message)
        subject.results.append(result)
    for planned in [p for p in plan if p.prop.stage == "last"]:
        result = _run(planned, subject, inputs, math.inf)
        if result is not None:
            subject.results.append(result)
    _noise_is_not_an_exploit(subject)
    return subject.results


def _noise_is_not_an_exploit(subject: RewardUnderTest) -> None:
    """A reward whose scores vary on the same input fails deterministic; its degenerate completion paid above the
    threshold may be that noise, so degenerate is not judged rather than reported as an exploit."""
    if subject.status("deterministic") != FAIL:
        return
    for index, result in enumerate(subject.results):
        if result.property == "degenerate" and result.status == FAIL:
            subject.results[index] = subject.result(
                "degenerate", SKIP, "not judged: the same input scores differently (see deterministic), so what it "
                "paid a degenerate completion may be noise")


def _run(planned: Planned, subject: RewardUnderTest, inputs: Inputs, deadline: float) -> PropertyResult | None:
    started = time.monotonic()
    target = () if planned.prop.targets is None else (planned.target,)
    result = planned.prop.run(planned.prop, subject, inputs, deadline, *target)
    if result is not None:
        result.seconds = time.monotonic() - started
    return result
