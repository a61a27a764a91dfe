"""The reward under test: its parameter variants, and calling it as TRL does (through the Reward callable) or
directly (to say which completion broke it and how)."""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Callable

from grpo_core.checks.display import clip, clip_repr
from grpo_core.checks.executor import Executor, Hung
from grpo_core.checks.progress import Quiet
from grpo_core.checks.results import PropertyResult
from grpo_core.checks.texts import DEFAULT_MAX_COMPLETION_LENGTH, as_chat, hostile_for, token_ids
from grpo_core.errors import RewardError
from grpo_core.rewards.reward import Reward, call_arguments, run_coroutine
from grpo_core.rewards.unscored import Unscored
from grpo_core.specs import RewardSpec
from grpo_core.rewards.backend import get_pool
from grpo_core.rewards.pool import TIMEOUT, Failure

DEFAULT_ITEM_TIMEOUT_S = 2.0
WARM_UP_S = 15.0  # the first call, made apart: what a reward imports inside its function
MAX_PARAM_VARIANTS = 12


@dataclass
class Item:
    text: str
    columns: dict  # dataset column -> value
    prompt: str = ""
    label: str = ""  # how a hostile text was built


@dataclass
class Outcome:
    scores: list | None
    errors: int
    timeouts: int
    raised: str | None


@dataclass
class Problem:
    kind: str  # "raised", "output" (wrong type or count) or "non-finite"
    index: int | None
    detail: str


def reward_call(spec: RewardSpec, params: dict, kwargs: dict):
    """Call the reward through its Reward callable, as TRL does; runs in a worker process or a thread."""
    metrics: dict[str, float] = {}

    def log_metric(key, value):
        metrics[key] = metrics.get(key, 0.0) + float(value)

    try:
        scores = Reward(spec, params)(**kwargs, log_metric=log_metric)
    except Exception as error:
        return None, metrics, str(error) if isinstance(error, RewardError) else f"{type(error).__name__}: {error}"
    return scores, metrics, None


def direct_call(func: Callable, batched: bool, args: tuple, kwargs: dict) -> tuple[str, str]:
    """Call the plugin's function itself and say what is wrong with the result, if anything."""
    try:
        value = func(*args, **kwargs)
        value = run_coroutine(value) if inspect.isawaitable(value) else value  # an async def function, as training awaits it
    except Exception as error:
        return "raised", f"{type(error).__name__}: {error}"
    if not batched:
        return check_value(value)
    try:
        values = list(value)
    except TypeError:
        return "output", f"returned {clip_repr(value)} ({type(value).__name__}), expected one float or None per completion"
    n = len(args[0] if args else kwargs.get("completions") or [])  # TRL's keyword call has no positional one
    if len(values) != n:
        return "output", f"returned {len(values)} value{'s' * (len(values) != 1)} for {n} completion{'s' * (n != 1)}"
    for value in values:
        kind, detail = check_value(value)
        if kind != "ok":
            return kind, detail
    return "ok", ""


def check_value(value) -> tuple[str, str]:
    if isinstance(value, Unscored):  # an item it could not score, and why: its score (None unless fixed) is what counts
        value = value.score
    if value is None:
        return "ok", ""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        return "output", f"returned {clip_repr(value)} ({type(value).__name__}), expected a float or None"
    try:
        number = float(value)
    except (TypeError, ValueError) as error:
        return "output", f"returned {clip_repr(value)}, which float() rejects: {error}"
    if not math.isfinite(number):
        return "non-finite", f"returned {number}"
    return "ok", ""


def param_variants(reward: Reward) -> list[Reward]:
    """The reward with one parameter changed at a time, to sensible values that validate.

    Choices and booleans take their other values, numbers are doubled and halved; text parameters
    (column names, tags) and time limits keep the values given. A value the parameter declares unsafe
    (``Param.unsafe``, such as ``sandbox=none``) is never picked.
    """
    spec, base = reward.spec, reward.params
    variants: list[Reward] = []
    seen = [base]
    for param in spec.params:
        value = base.get(param.name)
        if "timeout" in param.name:  # a resource limit: changing it only changes how long the checks take
            candidates = []
        elif param.choices:
            candidates = list(param.choices)
        elif param.type is bool:
            candidates = [not value] if isinstance(value, bool) else []
        elif param.type in (int, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
            candidates = [value * 2, max(1, value // 2) if param.type is int else value / 2] if value else []
        else:
            candidates = []
        for candidate in candidates:
            if candidate in param.unsafe:
                continue
            try:
                params = spec.resolve({**base, param.name: candidate})
                if params in seen:
                    continue
                variants.append(Reward(spec, params, reward.weight))
                seen.append(params)
            except Exception:
                continue  # the plugin rejects this value; fine
    return variants[:MAX_PARAM_VARIANTS]


class RewardUnderTest:
    """One reward and its parameter variants, called as TRL calls it under the executor's deadline, and what the
    properties found on it so far (``results``, the hang that stopped them, the items its own timeout cut)."""

    def __init__(self, reward: Reward, vary_params: bool = True, item_timeout_s: float = DEFAULT_ITEM_TIMEOUT_S):
        self.reward = reward
        self.spec = reward.spec
        self.name = reward.spec.name
        self.item_timeout_s = item_timeout_s
        self.executor = Executor(self.spec)
        self.variants = [reward] + (param_variants(reward) if vary_params else [])
        self._portable = [self.executor.portable(v.spec) for v in self.variants]
        self._accepted = set(inspect.signature(self.spec.func).parameters)
        self.lo, self.hi = (float(b) for b in self.spec.bounds)
        self.timeouts = 0
        self.hung: Hung | None = None
        self.results: list[PropertyResult] = []
        self.progress = Quiet()  # where a long check shows how far it is
        self.latency: float | None = None  # seconds per completion, timed on the first calls of a budgeted check
        self.budget_end = math.inf  # when the budgeted properties must all have stopped
        self.sized = None  # the examples a slow reward is checked on (sizing.Sizing), None when checked in full
        self.fit_budget = True  # whether a slow reward's check is sized to its time budget (run_checks)
        self.max_completion_length = DEFAULT_MAX_COMPLETION_LENGTH  # tokens a run generates: sizes hostile text
        self.warmed = False  # whether the first call (lazy imports) was made, apart from any property

    def close(self) -> None:
        self.executor.close()

    def result(self, prop: str, status: str, message: str = "", counterexample=None, examples: int = 0,
               note: str = "") -> PropertyResult:
        return PropertyResult(self.name, prop, status, message, counterexample, examples, note=note)

    def status(self, prop: str) -> str | None:
        """The status of property ``prop`` on this reward so far, None if it has not run."""
        return next((r.status for r in self.results if r.property == prop), None)

    def time_limit(self) -> float:
        return self.reward.timeout if self.reward.timeout is not None else self.item_timeout_s

    # calling

    def _parts(self, variant: Reward, items: list[Item], shape: str) -> dict:
        texts = [it.text for it in items]
        if shape == "chat":
            completions = [as_chat(t) for t in texts]
            prompts = [as_chat(it.prompt, "user") for it in items]
        else:
            completions = list(texts)
            prompts = [it.prompt for it in items]
        columns = {source: [it.columns.get(source) for it in items] for source in set(variant.columns.values())}
        return {"texts": texts, "completions": completions, "prompts": prompts,
                "ids": [token_ids(t) for t in texts], "columns": columns}

    def _seconds(self, n: int) -> float:
        if self.reward.timeout is not None:
            # The reward's own limit holds per item; this only catches a hang outside it, so it is generous
            # (a worker that timed out is replaced, and the new one imports the reward's libraries again).
            return (self.reward.timeout + 2.0) * max(n, 1) + 30.0
        seconds = self.item_timeout_s * max(n, 1) + 0.5
        # After a hang the other properties run on, each call held to a few items' time: a reward that hangs on
        # anything costs seconds more, not a batch's worth.
        return seconds if self.hung is None else min(seconds, max(3 * self.item_timeout_s, 5.0))

    def _warm_up(self, vi: int, item: Item) -> None:
        """One empty completion on ``item``'s row, given ``WARM_UP_S``, its result unused: a reward that imports
        inside its function (torch, a verifier's model) pays for it here, as training's first step does, not in
        a property's time limit."""
        parts = self._parts(self.variants[vi], [Item("", item.columns, item.prompt)], "plain")
        kwargs = {"prompts": parts["prompts"], "completions": parts["completions"], "completion_ids": parts["ids"],
                  "trainer_state": None, **parts["columns"]}
        try:
            self.executor.run(reward_call, (self._portable[vi], self.variants[vi].params, kwargs), WARM_UP_S)
        except Hung:
            pass

    def call(self, vi: int, items: list[Item], shape: str = "plain", seconds: float | None = None) -> Outcome:
        variant = self.variants[vi]
        parts = self._parts(variant, items, shape)
        kwargs = {"prompts": parts["prompts"], "completions": parts["completions"],
                  "completion_ids": parts["ids"], "trainer_state": None}
        for source, values in parts["columns"].items():
            kwargs.setdefault(source, values)
        seconds = self._seconds(len(items)) if seconds is None else seconds
        if not self.warmed:  # the first call pays for what the function imports inside (torch): an empty completion
            self.warmed = True
            self._warm_up(vi, items[0] if items else Item("", {}))
        try:
            result = self.executor.run(reward_call, (self._portable[vi], variant.params, kwargs), seconds)
        except Hung:
            raise Hung(seconds, self.example(vi, items, shape), len(items), (vi, items, shape)) from None
        if result[0] == "died":
            return Outcome(None, len(items), 0, result[1])
        scores, metrics, raised = result
        timeouts = int(metrics.get(f"rewards/{self.name}/timeouts", 0))
        self.timeouts += timeouts
        return Outcome(scores, int(metrics.get(f"rewards/{self.name}/errors", 0)), timeouts, raised)

    def _direct(self, vi: int, parts: dict, index: int | None) -> tuple[str, str]:
        variant = self.variants[vi]
        columns = {name: parts["columns"][source] for name, source in variant.columns.items()}
        # The same call the Reward callable makes in training, so a failure here is the reward's own.
        args, kwargs = call_arguments(self.spec, variant.params, parts["texts"], columns, parts["prompts"],
                                      parts["ids"], index)
        call = (self.spec.func, self.spec.batched, args, kwargs)
        if variant.timeout is not None and index is not None:
            result = get_pool().map(direct_call, [(call, {})], variant.timeout + 1.0)[0]
            if result is TIMEOUT:
                return "timeout", ""
            return ("raised", result.error) if isinstance(result, Failure) else result
        try:
            result = self.executor.run(direct_call, call, self._seconds(len(parts["texts"]) if index is None else 1))
        except Hung:
            return "timeout", ""
        return ("raised", result[1]) if result[0] == "died" else result

    def diagnose(self, vi: int, items: list[Item], shape: str, outcome: Outcome) -> list[Problem]:
        """Which items went wrong and how, by calling the plugin's function on them directly."""
        if outcome.raised is None and not outcome.errors:
            return []
        parts = self._parts(self.variants[vi], items, shape)
        problems: list[Problem] = []
        if self.spec.batched:
            kind, detail = self._direct(vi, parts, None)
            if kind not in ("ok", "timeout"):
                problems.append(Problem(kind, None, detail))
        else:
            candidates = range(len(items)) if outcome.raised or outcome.scores is None else [
                i for i, s in enumerate(outcome.scores) if s is None
            ]
            for i in candidates:
                kind, detail = self._direct(vi, parts, i)
                if kind not in ("ok", "timeout"):
                    problems.append(Problem(kind, i, detail))
                    if outcome.raised or len(problems) >= outcome.errors:
                        break
        if not problems:
            problems.append(Problem("raised", None, outcome.raised or
                                     "an error inside the Reward callable, but not when called again on the same input"))
        return problems

    def example(self, vi: int, items: list[Item], shape: str = "plain", scores=None, **extra) -> dict:
        example = {
            "params": dict(self.variants[vi].params),
            "shape": shape,
            "completions": [clip(it.text) for it in items],
            "columns": [{k: clip(v) for k, v in it.columns.items()} for it in items],
        }
        if self._accepted & {"prompt", "prompts"}:
            example["prompts"] = [clip(it.prompt) for it in items]
        labels = [it.label for it in items if it.label]
        if labels:
            example["input"] = ", ".join(labels)
        cut = [it for it in items if len(it.text) > len(clip(it.text))]
        fixed = dict(hostile_for(self.max_completion_length))
        if cut and all(fixed.get(it.label) == it.text for it in cut):  # a fixed hostile text: how to build it again
            example["rebuild"] = [f"dict(grpo_core.checks.texts.hostile_for({self.max_completion_length}))"
                                  f"[{it.label!r}]" for it in cut]
        elif cut:
            example["full completions"] = [it.text for it in cut]  # --json holds what the table cuts
        if scores is not None:
            example["scores"] = list(scores)
        example.update(extra)
        return example
