"""Property-based checks of rewards, run through the same adapter TRL calls.

``run_checks`` drives hypothesis over every reward: generic properties (one float or None per
completion, finite and inside the declared bounds, deterministic, independent of the rest of the
batch, the same score in both completion shapes, no crash on hostile text, within a time budget)
and the directions and gold completions each plugin declares. ``preflight`` is the quick version
the training command runs on the selected rewards and real dataset rows before loading a model.

This module is imported by worker processes, so hypothesis is only imported inside functions.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import pickle
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from grpo_core.rewards import Reward, RewardSpec

DEFAULT_MAX_EXAMPLES = 20
PREFLIGHT_MAX_EXAMPLES = 8
DEFAULT_ITEM_TIMEOUT_S = 2.0
MAX_PARAM_VARIANTS = 12

PASS, FAIL, SKIP = "pass", "fail", "skip"

# Generic properties, in the order they run, with the sentence each one promises.
PROPERTIES = {
    "output": "returns one float or None per completion",
    "bounds": "every score is finite and inside the declared bounds {bounds}",
    "gold": "a gold completion formatted from a row scores the top bound",
    "direction": "{description}",
    "deterministic": "the same input gives the same score",
    "batch-independent": "a completion's score does not depend on the other completions in its batch",
    "shapes": "plain strings and chat messages give the same score",
    "hostile": "hostile text (empty, 1 MB, control characters, surrogates, unbalanced tags, deep JSON, LaTeX bombs) never crashes it or scores outside the bounds",
    "time": "each completion is scored within {seconds:g} s",
}
PROPERTIES["degenerate"] = ("no completion that skips the task (empty, whitespace, the prompt copied back, padding, "
                            "repetition, and the ones the reward declares) scores more than {threshold}")
PROPERTIES["rows"] = "the reward's row_problems finds nothing that makes a row unfit for it"

WARN = "warn"  # a finding that does not stop a run (a dataset row the reward cannot use)
# Above the low bound by less than this share of the bounds' range, the reward pays "nothing": its declared
# upper bound says nothing about what it pays, so a degenerate completion is compared with real ones instead.
FAR_BELOW_SHARE = 0.01
ROW_SURVEY_SIZE = 50  # rows drawn from a reward's rows strategy to look for row problems


@dataclass
class PropertyResult:
    """The outcome of one property on one reward: ``status`` is pass, fail or skip."""

    reward: str
    property: str
    status: str
    message: str = ""
    counterexample: dict | None = None
    examples: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {
            "reward": self.reward,
            "property": self.property,
            "status": self.status,
            "message": self.message,
            "counterexample": _json_safe(self.counterexample),
            "examples": self.examples,
            "seconds": round(self.seconds, 3),
        }


@dataclass
class CheckReport:
    """Every property's result for every reward checked; ``ok`` when none failed."""

    results: list[PropertyResult] = field(default_factory=list)
    seed: int | None = None
    seconds: float = 0.0
    params: dict[str, dict] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def failures(self) -> list[PropertyResult]:
        return [r for r in self.results if r.status == FAIL]

    @property
    def rewards(self) -> list[str]:
        return list(dict.fromkeys(r.reward for r in self.results))

    def result(self, reward: str, prop: str) -> PropertyResult | None:
        """The result of property ``prop`` (e.g. ``bounds``, ``direction: ...``) for ``reward``."""
        for r in self.results:
            if r.reward == reward and r.property == prop:
                return r
        return None

    def failed(self, reward: str) -> list[str]:
        """Names of the properties ``reward`` failed."""
        return [r.property for r in self.results if r.reward == reward and r.status == FAIL]

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
            "params": _json_safe(self.params),
            "results": [r.to_dict() for r in self.results],
            "not_checked": self.unchecked(),
            "warnings": self.warnings(),
        }

    def unchecked(self) -> list[str]:
        """Each property not checked, or checked only in part, in words: why, and how to have it checked."""
        return [f"{r.reward} / {r.property}: {_not_checked(r)}" for r in self.results if _not_checked(r)]

    def warnings(self) -> list[str]:
        """One line per problem found in dataset rows, such as
        ``reward 'math': gold answer cannot be read in 12 of 200 rows (6.0%), e.g. 'forty two', 'seven'``."""
        lines = []
        for r in self.results:
            if r.status == WARN:
                problems = (r.counterexample or {}).get("problems") or []
                lines += [f"reward '{r.reward}': {_problem_line(p)}" for p in problems] or [f"reward '{r.reward}': {r.message}"]
        return lines

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)


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
        check = _RewardCheck(reward, max_examples, seed, rows, vary_params, item_timeout_s)
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


# --- calling a reward ------------------------------------------------------------------------


class _Violation(Exception):
    """A property does not hold for this example (hypothesis shrinks it)."""

    def __init__(self, message: str, example: dict) -> None:
        super().__init__(message)
        self.message = message
        self.example = example


class _Hung(BaseException):
    """A call missed its deadline. A BaseException, so hypothesis stops at once instead of shrinking."""

    def __init__(self, seconds: float, example: dict | None = None, items: int = 1) -> None:
        super().__init__(f"no result after {seconds:.1f} s")
        self.seconds = seconds
        self.example = example
        self.items = items


class _OutOfTime(BaseException):
    """The property's share of the time budget is spent."""


@dataclass
class _Item:
    text: str
    columns: dict  # dataset column -> value
    prompt: str = ""
    label: str = ""  # how a hostile text was built


@dataclass
class _Outcome:
    scores: list | None
    errors: int
    timeouts: int
    raised: str | None


@dataclass
class _Problem:
    kind: str  # "raised", "output" (wrong type or count) or "non-finite"
    index: int | None
    detail: str


def _adapter_call(spec: RewardSpec, params: dict, kwargs: dict):
    """Call the reward through its TRL adapter, as TRL does; runs in a worker process or a thread."""
    metrics: dict[str, float] = {}

    def log_metric(key, value):
        metrics[key] = metrics.get(key, 0.0) + float(value)

    try:
        scores = Reward(spec, params)(**kwargs, log_metric=log_metric)
    except Exception as error:
        from grpo_core.errors import RewardError

        return None, metrics, str(error) if isinstance(error, RewardError) else f"{type(error).__name__}: {error}"
    return scores, metrics, None


def _direct_call(func: Callable, batched: bool, args: tuple, kwargs: dict) -> tuple[str, str]:
    """Call the plugin's function itself and say what is wrong with the result, if anything."""
    try:
        value = func(*args, **kwargs)
    except Exception as error:
        return "raised", f"{type(error).__name__}: {error}"
    if not batched:
        return _check_value(value)
    try:
        values = list(value)
    except TypeError:
        return "output", f"returned {_clip_repr(value)} ({type(value).__name__}), expected one float or None per completion"
    n = len(args[0])
    if len(values) != n:
        return "output", f"returned {len(values)} value{'s' * (len(values) != 1)} for {n} completion{'s' * (n != 1)}"
    for value in values:
        kind, detail = _check_value(value)
        if kind != "ok":
            return kind, detail
    return "ok", ""


def _check_value(value) -> tuple[str, str]:
    if value is None:
        return "ok", ""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        return "output", f"returned {_clip_repr(value)} ({type(value).__name__}), expected a float or None"
    try:
        number = float(value)
    except (TypeError, ValueError) as error:
        return "output", f"returned {_clip_repr(value)}, which float() rejects: {error}"
    if not math.isfinite(number):
        return "non-finite", f"returned {number}"
    return "ok", ""


def _ping(spec_bytes: bytes) -> bool:
    """Whether a worker can load the reward (its module must be importable there)."""
    try:
        return isinstance(pickle.loads(spec_bytes), RewardSpec)
    except Exception:
        return False


_abandoned: list[threading.Thread] = []  # calls that missed their deadline and may still be running


def abandoned_calls() -> int:
    """How many reward calls missed their deadline and are still running in a thread of this process."""
    _abandoned[:] = [t for t in _abandoned if t.is_alive()]
    return len(_abandoned)


def _watched(func: Callable, args: tuple, seconds: float):
    """``func(*args)`` in a daemon thread; raise _Hung if it has not returned after ``seconds``."""
    box: dict[str, Any] = {}

    def target():
        try:
            box["value"] = func(*args)
        except BaseException as error:  # handed to the caller
            box["error"] = error

    thread = threading.Thread(target=target, name="grpo-check-call", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        _abandoned.append(thread)
        raise _Hung(seconds)
    if "error" in box:
        raise box["error"]
    return box["value"]


class _Executor:
    """Runs calls to one reward under a deadline.

    A reward without its own timeout runs in a worker process, which is killed when it misses
    the deadline (a thread cannot be stopped, and a runaway regex holds the GIL). Rewards that
    cannot be sent to a worker run in a daemon thread instead. A reward with a declared timeout
    already runs its items in the adapter's worker pool, so its calls only need a thread.
    """

    def __init__(self, spec: RewardSpec) -> None:
        self.spec = spec
        self.mode = "thread" if spec.timeout is not None else "process"
        self.pool = None

    def portable(self, spec: RewardSpec) -> RewardSpec:
        """The spec as sent to a worker: only the function and what the adapter reads."""
        return dataclasses.replace(spec, directions=(), rows=None, gold=None, validate=None)

    def run(self, func: Callable, args: tuple, seconds: float):
        if self.mode == "process" and self._start():
            from grpo_core.timeout import TIMEOUT, Failure

            result = self.pool.map(func, [(args, {})], seconds)[0]
            if result is TIMEOUT:
                raise _Hung(seconds)
            if not isinstance(result, Failure):
                return result
            if result.error == "worker process died":
                return ("died", "the process scoring it died (out of memory, or a crash in native code)")
            self.mode = "thread"  # the worker could not load the call; run it here instead
        return _watched(func, args, seconds)

    def _start(self) -> bool:
        if self.pool is not None:
            return True
        from grpo_core.timeout import Failure, WorkerPool

        if getattr(self.spec.func, "__module__", None) == "__main__":  # a worker cannot import a script
            self.mode = "thread"
            return False
        try:
            spec_bytes = pickle.dumps(self.portable(self.spec))
        except Exception:
            self.mode = "thread"
            return False
        self.pool = WorkerPool(size=1)
        ok = self.pool.map(_ping, [((spec_bytes,), {})], 60.0)[0]
        if ok is not True or isinstance(ok, Failure):
            self.close()
            self.mode = "thread"
            return False
        return True

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None


# --- one reward under check ----------------------------------------------------------------


class _RewardCheck:
    def __init__(self, reward: Reward, max_examples: int, seed: int, rows, vary_params: bool, item_timeout_s: float):
        self.reward = reward
        self.spec = reward.spec
        self.name = reward.spec.name
        self.max_examples = max(1, int(max_examples))
        self.seed = seed
        self.rows = rows
        self.item_timeout_s = item_timeout_s
        self.executor = _Executor(self.spec)
        self.variants = [reward] + (_param_variants(reward) if vary_params else [])
        self._portable = [self.executor.portable(v.spec) for v in self.variants]
        self._accepted = set(inspect.signature(self.spec.func).parameters)
        self._strategies: dict = {}
        self.timeouts = 0
        self._output_ok = True  # hostile reports wrong types only when output has not already
        self.lo, self.hi = (float(b) for b in self.spec.bounds)

    def close(self) -> None:
        self.executor.close()

    # calling

    def _parts(self, variant: Reward, items: list[_Item], shape: str) -> dict:
        from grpo_core.testing import as_chat, token_ids

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
        return self.item_timeout_s * max(n, 1) + 0.5

    def call(self, vi: int, items: list[_Item], shape: str = "plain") -> _Outcome:
        variant = self.variants[vi]
        parts = self._parts(variant, items, shape)
        kwargs = {"prompts": parts["prompts"], "completions": parts["completions"],
                  "completion_ids": parts["ids"], "trainer_state": None}
        for source, values in parts["columns"].items():
            kwargs.setdefault(source, values)
        seconds = self._seconds(len(items))
        try:
            result = self.executor.run(_adapter_call, (self._portable[vi], variant.params, kwargs), seconds)
        except _Hung:
            raise _Hung(seconds, self.example(vi, items, shape), len(items)) from None
        if result[0] == "died":
            return _Outcome(None, len(items), 0, result[1])
        scores, metrics, raised = result
        timeouts = int(metrics.get(f"rewards/{self.name}/timeouts", 0))
        self.timeouts += timeouts
        return _Outcome(scores, int(metrics.get(f"rewards/{self.name}/errors", 0)), timeouts, raised)

    def _direct(self, vi: int, parts: dict, index: int | None) -> tuple[str, str]:
        from grpo_core.rewards import call_arguments

        variant = self.variants[vi]
        columns = {name: parts["columns"][source] for name, source in variant.columns.items()}
        # The same call the adapter makes in training, so a failure here is the reward's own.
        args, kwargs = call_arguments(self.spec, variant.params, parts["texts"], columns, parts["prompts"],
                                      parts["ids"], index)
        call = (self.spec.func, self.spec.batched, args, kwargs)
        if variant.timeout is not None and index is not None:
            from grpo_core.timeout import TIMEOUT, Failure, get_pool

            result = get_pool().map(_direct_call, [(call, {})], variant.timeout + 1.0)[0]
            if result is TIMEOUT:
                return "timeout", ""
            return ("raised", result.error) if isinstance(result, Failure) else result
        try:
            result = self.executor.run(_direct_call, call, self._seconds(len(parts["texts"]) if index is None else 1))
        except _Hung:
            return "timeout", ""
        return ("raised", result[1]) if result[0] == "died" else result

    def diagnose(self, vi: int, items: list[_Item], shape: str, outcome: _Outcome) -> list[_Problem]:
        """Which items went wrong and how, by calling the plugin's function on them directly."""
        if outcome.raised is None and not outcome.errors:
            return []
        parts = self._parts(self.variants[vi], items, shape)
        problems: list[_Problem] = []
        if self.spec.batched:
            kind, detail = self._direct(vi, parts, None)
            if kind not in ("ok", "timeout"):
                problems.append(_Problem(kind, None, detail))
        else:
            candidates = range(len(items)) if outcome.raised or outcome.scores is None else [
                i for i, s in enumerate(outcome.scores) if s is None
            ]
            for i in candidates:
                kind, detail = self._direct(vi, parts, i)
                if kind not in ("ok", "timeout"):
                    problems.append(_Problem(kind, i, detail))
                    if outcome.raised or len(problems) >= outcome.errors:
                        break
        if not problems:
            problems.append(_Problem("raised", None, outcome.raised or
                                     "raised inside the adapter, but not when called again on the same input"))
        return problems

    def example(self, vi: int, items: list[_Item], shape: str = "plain", scores=None, **extra) -> dict:
        example = {
            "params": dict(self.variants[vi].params),
            "shape": shape,
            "completions": [_clip(it.text) for it in items],
            "columns": [{k: _clip(v) for k, v in it.columns.items()} for it in items],
        }
        if self._accepted & {"prompt", "prompts"}:
            example["prompts"] = [_clip(it.prompt) for it in items]
        labels = [it.label for it in items if it.label]
        if labels:
            example["input"] = ", ".join(labels)
        if scores is not None:
            example["scores"] = list(scores)
        example.update(extra)
        return example

    # strategies

    def _row(self, vi: int):
        """Strategy of column dicts (dataset column -> value) for variant ``vi``."""
        key = ("row", vi)
        if key not in self._strategies:
            from hypothesis import strategies as st

            from grpo_core.testing import texts

            variant = self.variants[vi]
            if self.rows:
                strategy = st.sampled_from(self.rows).map(lambda row: self._columns(variant, row))
            elif self.spec.rows is not None:
                strategy = self.spec.rows(variant.params).map(lambda row: self._columns(variant, row))
            else:
                strategy = st.fixed_dictionaries({source: texts(20) for source in set(variant.columns.values())})
            self._strategies[key] = strategy
        return self._strategies[key]

    @staticmethod
    def _columns(variant: Reward, row: dict) -> dict:
        """A row keyed by dataset columns, from a dict keyed by dataset columns or by the reward's names."""
        row = dict(row or {})
        return {source: row[source] if source in row else row.get(name) for name, source in variant.columns.items()}

    def _by_name(self, vi: int, columns: dict) -> dict:
        return {name: columns.get(source) for name, source in self.variants[vi].columns.items()}

    def _cached(self, key, build):
        """Strategies are built once: hypothesis pays to validate every new strategy object it draws from."""
        if key not in self._strategies:
            self._strategies[key] = build()
        return self._strategies[key]

    def _prompts(self):
        def build():
            from hypothesis import strategies as st

            from grpo_core.testing import texts

            if self.rows and any("prompt" in row for row in self.rows):
                from grpo_core.rewards import completion_text

                return st.sampled_from([completion_text(row.get("prompt")) for row in self.rows])
            return texts(30)

        return self._cached("prompts", build)

    def _choices(self, vi: int):
        """What an ordinary completion is, for variant ``vi``: drawn text, one side of a direction's
        pair (with the pair's row), or the gold completion for the group's row."""

        def build():
            from hypothesis import strategies as st

            from grpo_core.rewards import completion_text
            from grpo_core.testing import texts

            variant = self.variants[vi]
            choices = [texts().map(lambda text: ("text", text, None))]
            for direction in self.spec.directions:
                choices.append(st.tuples(direction.pairs(variant.params), st.booleans()).map(
                    lambda d: ("pair", completion_text(d[0][0] if d[1] else d[0][1]), self._columns(variant, d[0][2]))
                ))
            if self.spec.gold is not None:
                choices.append(st.just(("gold", None, None)))
            return st.one_of(choices)

        return self._cached(("choices", vi), build)

    def _item(self, vi: int, choice: tuple, columns: dict, prompt: str) -> _Item:
        kind, text, own_columns = choice
        if kind == "gold":
            return self._gold_item(vi, columns, prompt)
        return _Item(text, own_columns if kind == "pair" else columns, prompt)

    def _gold_item(self, vi: int, columns: dict, prompt: str) -> _Item:
        try:
            gold = self.spec.gold(self._by_name(vi, columns), self.variants[vi].params)
        except Exception:
            gold = None  # the gold property reports this
        return _Item(gold if isinstance(gold, str) else "", columns, prompt)

    def _variant(self):
        from hypothesis import strategies as st

        return self._cached("variant", lambda: st.sampled_from(range(len(self.variants))))

    def _batches(self, min_size: int = 1, max_size: int = 3, shapes=("plain", "chat")):
        """(variant, items, shape): a group of completions sharing one row, as GRPO batches them."""

        def build():
            from hypothesis import strategies as st

            shape_st = st.sampled_from(shapes)

            @st.composite
            def batches(draw):
                vi = draw(self._variant())
                columns = draw(self._row(vi))
                prompt = draw(self._prompts())
                lists = self._cached(("lists", vi, min_size, max_size),
                                     lambda: st.lists(self._choices(vi), min_size=min_size, max_size=max_size))
                items = [self._item(vi, choice, columns, prompt) for choice in draw(lists)]
                return vi, items, draw(shape_st)

            return batches()

        return self._cached(("batches", min_size, max_size, shapes), build)

    def _per_variant(self, key: str, parts: Callable[[int], tuple]):
        """(variant, *drawn parts) where ``parts(vi)`` gives the strategies to draw for that variant."""

        def build():
            from hypothesis import strategies as st

            @st.composite
            def drawn(draw):
                vi = draw(self._variant())
                return (vi, *(draw(strategy) for strategy in self._cached((key, vi), lambda: parts(vi))))

            return drawn()

        return self._cached(key, build)

    # running

    def run(self, deadline: float) -> list[PropertyResult]:
        plan: list[tuple[str, Callable]] = []
        missing = self._missing_columns()
        if missing:
            return [self._result("columns", FAIL, missing)]
        plan += [("output", self.check_output), ("bounds", self.check_bounds), ("gold", self.check_gold)]
        for direction in self.spec.directions:
            plan.append((f"direction: {direction.description}", lambda d, direction=direction: self.check_direction(direction, d)))
        if not self.spec.directions:
            plan.append(("direction", None))
        plan.append(("degenerate", self.check_degenerate))  # before hostile, whose slow texts can spend the budget
        plan += [("deterministic", self.check_deterministic), ("batch-independent", self.check_batch),
                 ("shapes", self.check_shapes), ("hostile", self.check_hostile)]
        if self.reward.columns:
            plan.append(("rows", self.check_rows))
        results: list[PropertyResult] = []
        hung: _Hung | None = None
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
            except _Hung as error:
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
        missing = [(name, source) for name, source in self.reward.columns.items() if source not in present]
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

    def _violation(self, prop: str, detail: str, example: dict, **values) -> _Violation:
        label = "direction" if prop == "direction" else prop
        return _Violation(f"{label} violated: {self._describe(prop, **values)}; {detail}", example)

    def _time_result(self, hung: _Hung | None) -> PropertyResult:
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
                raise _OutOfTime()
            state["examples"] += 1
            try:
                check(example)
            except _Violation as violation:
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
        except _OutOfTime:
            if not state["violations"]:
                if not n():
                    return self._result(prop, SKIP, "not run: the time budget was spent")
                return self._vacuous(prop, counters, n()) or self._result(
                    prop, PASS, f"stopped after {n()} examples: the time budget was spent", examples=n())
        except _Violation:
            pass
        except Exception as error:
            if not state["violations"]:
                return self._result(prop, FAIL, f"the check could not run: {type(error).__name__}: {_first_line(error)}",
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

    def check_output(self, deadline: float) -> PropertyResult:
        counters = {"scored": 0, "fail": True, "reason": "the reward scored nothing: every generated completion "
                    "scored None, and a reward that never gives a score teaches nothing"}

        def check(example):
            vi, items, shape = example
            outcome = self.call(vi, items, shape)
            for problem in self.diagnose(vi, items, shape, outcome):
                if problem.kind in ("raised", "output"):
                    at = items[problem.index].text if problem.index is not None else None
                    where = f" on {_clip_repr(at)}" if at is not None else f" on a batch of {len(items)}"
                    verb = "raised " if problem.kind == "raised" else ""
                    raise self._violation("output", f"it {verb}{problem.detail}{where}", self.example(vi, items, shape))
            scores = outcome.scores
            if outcome.raised is None and (not isinstance(scores, list) or len(scores) != len(items)
                                           or any(s is not None and not isinstance(s, float) for s in scores)):
                raise self._violation("output", f"the adapter returned {_clip_repr(scores)} for {len(items)} completions",
                                      self.example(vi, items, shape))
            counters["scored"] += sum(s is not None for s in scores or [])

        # Plain strings only: a crash on chat messages alone is the shapes property's finding.
        result = self._hypothesis("output", self._batches(shapes=("plain",)), check, deadline, counters)
        self._output_ok = result.status != FAIL
        return result

    def check_bounds(self, deadline: float) -> PropertyResult:
        counters = {"scored": 0}

        def check(example):
            vi, items, shape = example
            outcome = self.call(vi, items, shape)
            if outcome.raised is not None or outcome.errors:
                for problem in self.diagnose(vi, items, shape, outcome):
                    if problem.kind == "non-finite":
                        at = items[problem.index].text if problem.index is not None else None
                        where = f" for {_clip_repr(at)}" if at is not None else ""
                        raise self._violation("bounds", f"it {problem.detail}{where}", self.example(vi, items, shape))
            for item, score in zip(items, outcome.scores or []):
                if score is None:
                    continue
                counters["scored"] += 1
                if not (self.lo <= score <= self.hi):
                    raise self._violation("bounds", f"{_clip_repr(item.text)} scored {score!r}",
                                          self.example(vi, items, shape, outcome.scores))

        return self._hypothesis("bounds", self._batches(), check, deadline, counters)

    def check_gold(self, deadline: float) -> PropertyResult:
        if self.spec.gold is None:
            return self._result("gold", SKIP, "the reward declares no gold completion")
        counters = {"scored": 0, "reason": "gold() gave no completion for any row drawn"}

        def check(example):
            vi, columns, prompt = example
            params = self.variants[vi].params
            try:
                gold = self.spec.gold(self._by_name(vi, columns), params)
            except Exception as error:
                raise self._violation("gold", f"gold() raised {type(error).__name__}: {error}",
                                      self.example(vi, [_Item("", columns, prompt)])) from None
            if gold is None:
                return
            item = _Item(gold, columns, prompt)
            outcome = self.call(vi, [item])
            score = (outcome.scores or [None])[0]
            counters["scored"] += 1
            if score is None or not math.isclose(score, self.hi, rel_tol=1e-9, abs_tol=1e-9):
                detail = f"the gold completion {_clip_repr(gold)} scored {score!r}"
                if score is None and not (outcome.raised or outcome.errors):
                    detail += " (not scorable): the reward cannot score its own gold example"
                if score is None and (outcome.raised or outcome.errors):
                    problems = self.diagnose(vi, [item], "plain", outcome)
                    detail += f" (it raised {problems[0].detail})"
                raise self._violation("gold", detail, self.example(vi, [item], scores=[score]))

        strategy = self._per_variant("gold", lambda vi: (self._row(vi), self._prompts()))
        return self._hypothesis("gold", strategy, check, deadline, counters)

    def check_direction(self, direction, deadline: float) -> PropertyResult:
        from grpo_core.rewards import completion_text

        prop = f"direction: {direction.description}"
        counters = {"scored": 0, "fail": True,
                    "reason": "no pair drawn could be compared: in every pair the better or the worse completion "
                              "scored None, so the direction was never shown to hold"}

        def check(example):
            vi, (better, worse, columns), prompt = example
            columns = self._columns(self.variants[vi], columns)
            items = [_Item(completion_text(better), columns, prompt), _Item(completion_text(worse), columns, prompt)]
            outcome = self.call(vi, items)
            if outcome.raised is not None or outcome.errors:
                problems = [p for p in self.diagnose(vi, items, "plain", outcome) if p.kind != "non-finite"]
                if problems:
                    which = {0: "better ", 1: "worse "}.get(problems[0].index, "")
                    raise self._violation("direction", f"scoring the {which}completion raised {problems[0].detail}",
                                          self.example(vi, items), description=direction.description)
            b, w = (outcome.scores or [None, None])[:2]
            if b is None or w is None:  # a pair with an unscored side shows nothing, so it does not count as held
                return
            counters["scored"] += 1
            ok = b > w if direction.strict else b >= w - 1e-9 * max(1.0, abs(w))
            if not ok:
                sign = "<=" if direction.strict else "<"
                raise self._violation(
                    "direction",
                    f"better={_clip_repr(items[0].text)} scored {b!r} {sign} worse={_clip_repr(items[1].text)} scored {w!r}",
                    self.example(vi, items, scores=[b, w]),
                    description=direction.description,
                )

        strategy = self._per_variant(prop, lambda vi: (direction.pairs(self.variants[vi].params), self._prompts()))
        return self._hypothesis(prop, strategy, check, deadline, counters)

    def check_deterministic(self, deadline: float) -> PropertyResult:
        counters = {"scored": 0}

        def check(example):
            vi, items, shape = example
            first = self.call(vi, items, shape)
            second = self.call(vi, items, shape)
            if (first.raised is None) != (second.raised is None) or first.errors != second.errors:
                raise self._violation("deterministic", "it raised on one call and not on the other",
                                      self.example(vi, items, shape))
            for i, (a, b) in enumerate(zip(first.scores or [], second.scores or [])):
                counters["scored"] += a is not None
                if not _same(a, b):
                    raise self._violation("deterministic", f"{_clip_repr(items[i].text)} scored {a!r}, then {b!r}",
                                          self.example(vi, items, shape, scores=first.scores, second_scores=second.scores))

        return self._hypothesis("deterministic", self._batches(), check, deadline, counters)

    def check_batch(self, deadline: float) -> PropertyResult:
        counters = {"scored": 0}

        def check(example):
            vi, items, shape = example
            together = self.call(vi, items, shape)
            if together.raised is not None:
                return
            alone = [self.call(vi, [item], shape) for item in items]
            reverse = self.call(vi, items[::-1], shape)
            for i, item in enumerate(items):
                a = alone[i].scores[0] if alone[i].scores else None
                b = together.scores[i]
                r = reverse.scores[len(items) - 1 - i] if reverse.scores else b
                counters["scored"] += a is not None
                for other, where in ((b, f"in a batch of {len(items)}"), (r, "in the same batch reversed")):
                    if not _same(a, other):
                        raise self._violation(
                            "batch-independent",
                            f"{_clip_repr(item.text)} scored {a!r} alone but {other!r} {where}; if that is intended "
                            f"(scores relative to the group), declare RewardSpec(group_relative=True)",
                            self.example(vi, items, shape, scores=together.scores,
                                         alone_scores=[o.scores[0] if o.scores else None for o in alone]),
                        )

        return self._hypothesis("batch-independent", self._batches(min_size=2), check, deadline, counters)

    def check_shapes(self, deadline: float) -> PropertyResult:
        counters = {"scored": 0}

        def check(example):
            vi, items, _ = example
            plain = self.call(vi, items, "plain")
            chat = self.call(vi, items, "chat")
            if plain.raised is not None and chat.raised is not None:
                return
            for broken, fine, shape in ((chat, plain, "chat"), (plain, chat, "plain")):
                if broken.raised is not None or broken.errors > fine.errors:
                    problems = self.diagnose(vi, items, shape, broken)
                    other = "plain strings" if shape == "chat" else "chat messages"
                    raise self._violation(
                        "shapes",
                        f"{'chat-shaped' if shape == 'chat' else 'plain-string'} input raised {problems[0].detail}, "
                        f"while {other} scored {fine.scores!r}",
                        self.example(vi, items, shape),
                    )
            for i, (a, b) in enumerate(zip(plain.scores, chat.scores)):
                counters["scored"] += a is not None
                if not _same(a, b):
                    raise self._violation(
                        "shapes", f"{_clip_repr(items[i].text)} scored {a!r} as a plain string but {b!r} as a chat message",
                        self.example(vi, items, "plain", scores=plain.scores, chat_scores=chat.scores),
                    )

        return self._hypothesis("shapes", self._batches(shapes=("plain",)), check, deadline, counters)

    def check_hostile(self, deadline: float) -> PropertyResult:
        from hypothesis import find, settings

        from grpo_core.testing import HOSTILE_TEXTS, hostile_texts

        started = time.monotonic()
        try:
            if self.rows:
                columns = self._columns(self.reward, self.rows[0])
            else:  # the simplest valid row
                columns = find(self._row(0), lambda row: True, settings=settings(database=None))
        except Exception as error:
            return self._result("hostile", FAIL, f"the check could not run: the reward's rows strategy raised "
                                                 f"{type(error).__name__}: {_first_line(error)}")
        kinds = ("raised", "output") if self._output_ok else ("raised",)
        fixed = [_Item(text, columns, "", label) for label, text in HOSTILE_TEXTS]

        def out_of_bounds(items, outcome):
            for index, score in enumerate(outcome.scores or []):
                if score is not None and not (self.lo <= score <= self.hi):
                    return index, f"scored {score!r}, outside the declared bounds ({self.lo}, {self.hi})"
            return None
        # Items under a hard timeout go to the adapter together, as its worker pool overlaps them (in pairs
        # when time is short, so the deadline is looked at between them); others go one by one.
        size = 1 if self.spec.timeout is None else len(fixed) if deadline == math.inf else 2
        groups = [fixed[i:i + size] for i in range(0, len(fixed), size)]
        checked = 0
        for group in groups:
            if time.monotonic() > deadline:
                return self._result("hostile", PASS, f"stopped after {checked} of {len(fixed)} fixed hostile texts: "
                                                     "the time budget was spent", examples=checked)
            outcome = self.call(0, group)
            for problem in self.diagnose(0, group, "plain", outcome):
                if problem.kind in kinds:
                    item = group[problem.index or 0]
                    verb = "raised " if problem.kind == "raised" else ""
                    return self._result(
                        "hostile", FAIL,
                        f"hostile violated: {self._describe('hostile')}; on {item.label} it {verb}{problem.detail}",
                        self.example(0, [item]), checked + 1)
            bad = out_of_bounds(group, outcome)
            if bad is not None:
                item = group[bad[0]]
                return self._result("hostile", FAIL,
                                    f"hostile violated: {self._describe('hostile')}; on {item.label} it {bad[1]}",
                                    self.example(0, [item], scores=outcome.scores), checked + 1)
            checked += len(group)

        def check(example):
            vi, text, columns = example
            item = _Item(text, columns, text[:50])
            outcome = self.call(vi, [item])
            for problem in self.diagnose(vi, [item], "plain", outcome):
                if problem.kind in kinds:
                    verb = "raised " if problem.kind == "raised" else ""
                    raise self._violation("hostile", f"on {_clip_repr(text)} it {verb}{problem.detail}",
                                          self.example(vi, [item]))
            bad = out_of_bounds([item], outcome)
            if bad is not None:
                raise self._violation("hostile", f"on {_clip_repr(text)} it {bad[1]}",
                                      self.example(vi, [item], scores=outcome.scores))

        nasty = hostile_texts(include_fixed=False)
        strategy = self._per_variant("hostile", lambda vi: (nasty, self._row(vi)))
        result = self._hypothesis("hostile", strategy, check, deadline)
        result.examples += checked
        result.seconds = time.monotonic() - started
        return result

    # the exploit audit: completions that skip the task, and rows the reward cannot use

    def _drawn(self, strategy, n: int, deadline: float = math.inf) -> list:
        """Up to ``n`` examples drawn from ``strategy`` with the run's seed, without shrinking; fewer if
        ``deadline`` passes first (at least one)."""
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings
        from hypothesis import seed as seed_decorator

        drawn: list = []

        def collect(example):
            if drawn and time.monotonic() > deadline:
                raise _OutOfTime()
            drawn.append(example)

        run = seed_decorator(self.seed)(
            settings(max_examples=max(1, n), database=None, deadline=None, phases=[Phase.generate],
                     suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)(given(strategy)(collect))
        )
        try:
            run()
        except _OutOfTime:
            pass
        return drawn

    def _prompted_rows(self, vi: int):
        """Strategy of (columns, prompt text): real rows with their prompts, rows from the reward's rows strategy
        (its optional ``prompt`` key is the prompt), or drawn text columns with no prompt."""
        from hypothesis import strategies as st

        variant = self.variants[vi]
        if self.rows:
            return st.sampled_from(self.rows).map(lambda row: (self._columns(variant, row), _prompt_of(row)))
        if self.spec.rows is not None:
            return self.spec.rows(variant.params).map(lambda row: (self._columns(variant, row), _prompt_of(row)))
        return self._row(vi).map(lambda columns: (columns, ""))

    def check_degenerate(self, deadline: float) -> PropertyResult:
        share = float(self.spec.degenerate_share)
        if share >= 1.0:
            return self._result("degenerate", SKIP, f"the reward sets degenerate_share={share:g}, so it may pay a "
                                                    "completion that skips the task up to its high bound")
        from hypothesis import strategies as st

        try:
            strategy = self._per_variant("degenerate", lambda vi: (
                self._prompted_rows(vi), st.lists(self._choices(vi), min_size=1, max_size=3)))
            examples = self._drawn(strategy, self.max_examples, deadline)
        except Exception as error:
            return self._result("degenerate", FAIL, f"the check could not run: drawing rows raised "
                                                    f"{type(error).__name__}: {_first_line(error)}")
        rows = tried = 0
        stopped = False
        for vi, (columns, prompt), choices in examples:
            if rows and time.monotonic() > deadline:
                stopped = True
                break
            found = self._audit_row(vi, columns, prompt, choices, share)
            if isinstance(found, PropertyResult):
                found.examples = rows + 1
                return found
            rows += 1
            tried += found
        how = (f"{tried} degenerate completions scored on {rows} row{'s' * (rows != 1)}"
               + (", then the time budget was spent" if stopped else ""))
        if self.spec.degenerate is None:
            how += f"; only the generic ones, as the reward {_GENERIC_ONLY}"
        return self._result("degenerate", PASS, how, examples=rows)

    def _audit_row(self, vi: int, columns: dict, prompt: str, choices: list, share: float):
        """Score the degenerate completions for one row next to real ones (the gold and drawn completions);
        a PropertyResult when one is paid too much, else how many were scored."""
        from grpo_core.degenerate import generic_degenerate, padding_to

        params = self.variants[vi].params
        declared: list = []
        if self.spec.degenerate is not None:
            try:
                declared = self.spec.degenerate(prompt, self._by_name(vi, columns), params)
            except Exception as error:
                return self._result("degenerate", FAIL, f"degenerate() raised {type(error).__name__}: {_first_line(error)}",
                                    self.example(vi, [_Item("", columns, prompt)]))
            declared, problem = _degenerate_pairs(declared)
            if problem:
                return self._result("degenerate", FAIL, problem, self.example(vi, [_Item("", columns, prompt)]))
        real = [self._gold_item(vi, columns, prompt)] if self.spec.gold is not None else []
        real += [self._item(vi, choice, columns, prompt) for choice in choices]
        lengths = sorted({len(item.text) for item in real if item.text}, reverse=True)[:3]
        suspects: dict[str, str] = {}  # text -> label: each text scored once, under its first label
        for label, text in generic_degenerate(prompt) + [p for n in lengths for p in padding_to(n)] + declared:
            suspects.setdefault(text, label)
        items = real + [_Item(text, columns, prompt, label) for text, label in suspects.items()]
        outcome = self.call(vi, items)
        if outcome.raised is not None or not outcome.scores:
            return 0  # a crash is the output property's finding
        scores, k = outcome.scores, len(real)
        paid = [s for s in scores[:k] if s is not None]
        top = max(paid) if paid else None
        best = max(scores, key=lambda s: -math.inf if s is None else s)
        best = self.lo if best is None else best
        far = not math.isfinite(self.hi) or best - self.lo < FAR_BELOW_SHARE * (self.hi - self.lo)
        threshold = self.lo + share * (self.hi - self.lo)
        tol = 1e-9 * max(1.0, abs(self.lo), abs(top or 0.0), abs(threshold) if math.isfinite(threshold) else 0.0)
        over = []
        for item, score in zip(items[k:], scores[k:]):
            if score is None:
                continue
            if math.isfinite(self.hi) and score > threshold + tol:
                over.append((score, item))
            elif far and top is not None and score > self.lo + tol and score >= top - tol:
                over.append((score, item))
        if not over:
            return sum(s is not None for s in scores[k:])
        score, item = max(over, key=lambda found: found[0])  # the first of the highest
        if far:
            best_real = real[scores[:k].index(top)]
            bound = (f"the best score of a real completion (the gold or a drawn one), {top!r} for "
                     f"{_clip_repr(best_real.text)}; the declared high bound {self.hi:g} is far above anything the "
                     f"reward paid, so it is no guide")
            detail = f"{item.label}, {_clip_repr(item.text)}, scored {score!r}, at or above that best score"
            limit = {"best real completion": _clip(best_real.text), "best real score": top}
        else:
            bound = (f"{threshold:g}, {share:g} of the way from the low bound {self.lo:g} to the high bound "
                     f"{self.hi:g} (degenerate_share={share:g})")
            detail = f"{item.label}, {_clip_repr(item.text)}, scored {score!r}, above {threshold:g}"
            limit = {"threshold": threshold}
        others = [f"{o.label} ({s!r})" for s, o in over if o is not item]
        if others:
            detail += f"; {len(others)} more paid too: " + ", ".join(others[:4]) + (", ..." if len(others) > 4 else "")
        message = f"degenerate violated: {PROPERTIES['degenerate'].format(threshold=bound)}; {detail}"
        return self._result("degenerate", FAIL, message, self.example(vi, [item], scores=[score], **limit))

    def check_rows(self, deadline: float) -> PropertyResult:
        variant = self.reward
        if self.rows:
            rows, where = [self._columns(variant, row) for row in self.rows], "dataset rows"
        elif self.spec.rows is not None:
            try:
                rows = self._drawn(self.spec.rows(variant.params).map(lambda row: self._columns(variant, row)),
                                   ROW_SURVEY_SIZE, deadline)
            except Exception as error:
                return self._result("rows", FAIL, f"the check could not run: the reward's rows strategy raised "
                                                  f"{type(error).__name__}: {_first_line(error)}")
            where = "rows drawn from the reward's rows strategy"
        else:
            names = ", ".join(variant.columns)
            return self._result("rows", SKIP, f"the reward declares no rows strategy, so the checks drew its columns "
                                              f"({names}) as random text; " + _DECLARE["rows"])
        if self.spec.row_problems is None:
            return self._result("rows", SKIP, "the reward declares no row_problems; " + _DECLARE["row_problems"])
        found: dict[str, list] = {}  # problem -> [rows with it, examples]
        looked = 0
        for row in rows:
            if looked and time.monotonic() > deadline:
                break
            looked += 1
            try:
                problems = list(self.spec.row_problems(self._by_name(0, row), variant.params) or [])
            except Exception as error:
                problems = [(f"row_problems() raised {type(error).__name__}", _first_line(error))]
            for problem in dict.fromkeys(str(p) for p, _ in problems):
                found.setdefault(problem, [0, []])[0] += 1
            for problem, example in problems:
                examples = found[str(problem)][1]
                if len(examples) < 3 and _clip(str(example), 60) not in examples:
                    examples.append(_clip(str(example), 60))
        if not found:
            return self._result("rows", PASS, f"row_problems found nothing in {looked} {where}", examples=looked)
        summary = [{"problem": problem, "rows": count, "of": looked, "examples": examples}
                   for problem, (count, examples) in sorted(found.items(), key=lambda f: -f[1][0])]
        return self._result("rows", WARN, "; ".join(_problem_line(p) for p in summary),
                            {"problems": summary, "looked_at": where}, looked)


# How to declare what a property needs, said where the report says the property was not checked.
_DECLARE = {
    "direction": ('declare one like this: directions=(Direction("a completion closer to the target scores at '
                  'least as high", pairs),), where pairs(params) returns a hypothesis strategy of (better, worse, '
                  "columns), e.g. grpo_core.testing.ranked_pairs(...)"),
    "gold": ("declare one like this: gold=lambda columns, params: f\"<answer>{columns['answer']}</answer>\", "
             "a completion that must score the high bound"),
    "rows": ('declare one like this: rows=lambda params: st.fixed_dictionaries({"answer": st.integers().map(str)}), '
             "a hypothesis strategy of valid rows (a \"prompt\" key gives the row's prompt)"),
    "row_problems": ('declare one like this: row_problems=lambda columns, params: [("gold answer cannot be read", '
                     'columns["answer"])] if ... else [], what makes one dataset row unfit for the reward'),
    "degenerate": ("declare them like this: degenerate=lambda prompt, columns, params: [(label, completion), ...], "
                   "built with grpo_core.testing's copied_prompt, prompt_numbers, placeholders, padded and repeated"),
}


def _prompt_of(row) -> str:
    from grpo_core.rewards import completion_text

    return completion_text(row.get("prompt")) if isinstance(row, dict) else ""


def _degenerate_pairs(value) -> tuple[list, str]:
    """The (label, completion text) pairs a degenerate() callable returned, or why they are not that."""
    from grpo_core.rewards import completion_text

    expected = "degenerate() must return a list of (label, completion) pairs"
    try:
        pairs = list(value or [])
    except TypeError:
        return [], f"{expected}, got {_clip_repr(value)}"
    out = []
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            return [], f"{expected}, got the item {_clip_repr(pair)}"
        out.append((str(pair[0]), completion_text(pair[1])))
    return out, ""


def _problem_line(problem: dict) -> str:
    """``gold answer cannot be read in 12 of 200 rows (6.0%), e.g. 'forty two', 'seven'``"""
    share = 100.0 * problem["rows"] / max(1, problem["of"])
    examples = ", ".join(_clip_repr(e, 40) for e in problem["examples"])
    return f"{problem['problem']} in {problem['rows']} of {problem['of']} rows ({share:.1f}%)" + (
        f", e.g. {examples}" if examples else "")


def _param_variants(reward: Reward) -> list[Reward]:
    """The reward with one parameter changed at a time, to sensible values that validate.

    Choices and booleans take their other values, numbers are doubled and halved; text parameters
    (column names, tags) and time limits keep the values given.
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
            try:
                params = spec.resolve({**base, param.name: candidate})
                if params in seen:
                    continue
                variants.append(Reward(spec, params, reward.weight))
                seen.append(params)
            except Exception:
                continue  # the plugin rejects this value; fine
    return variants[:MAX_PARAM_VARIANTS]


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _clip(value: Any, limit: int = 1000) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"... ({len(value):,} characters)"
    return value


def _clip_repr(value: Any, limit: int = 80) -> str:
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit]) + f"... ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= limit + 20 else text[: limit + 20] + "..."


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


# --- the report, as text --------------------------------------------------------------------

_ROWS = ("columns", "output", "bounds", "gold", "direction", "deterministic", "batch-independent", "shapes",
         "hostile", "degenerate", "rows", "time")


def _row_of(prop: str) -> str:
    return "direction" if prop.startswith("direction") else prop


def _cell(results: list[PropertyResult]) -> tuple[str, str]:
    if not results:
        return "", ""
    failed = [r for r in results if r.status == FAIL]
    passed = [r for r in results if r.status == PASS]
    several = len(results) > 1
    if failed:
        return ("FAIL" + (f" {len(failed)}/{len(results)}" if several else "")), "bold red"
    if any(r.status == WARN for r in results):
        return "warn", "yellow"
    if passed:
        return ("pass" + (f" {len(passed)}/{len(results)}" if several else "")), "green"
    return "skip", "dim"


_GENERIC_ONLY = "declares none of its own"


def _not_checked(result: PropertyResult) -> str:
    """Why ``result``'s property was not checked, or only in part, and how to have it checked; "" if it was."""
    message = result.message
    if result.status == SKIP:
        prop = _row_of(result.property)
        if prop in ("direction", "gold") and "declares no" in message:
            return f"not checked, the reward declares none; {_DECLARE[prop]}"
        for prefix in ("not run: ", "interrupted: "):
            message = message.removeprefix(prefix)
        return f"not checked, {message}" if message else "not checked"
    if result.status == PASS and result.property == "degenerate" and _GENERIC_ONLY in message:
        return ("checked only with the generic completions (empty, whitespace, the prompt copied back, padding, "
                f"repetition): the reward {_GENERIC_ONLY}; {_DECLARE['degenerate']}")
    if result.status == PASS and "time budget was spent" in message:
        return f"checked only in part: {message}"
    return ""


def preflight_summary(report: CheckReport, rows: int) -> list[str]:
    """What preflight prints when no property failed: on how many rows, what the rewards do not declare and so
    was not checked (with how to declare it), and the problems found in the dataset's rows (warnings: the run
    goes on). Properties its time budget cut short are left to the full report, as they vary from run to run."""
    unchecked = [line for line in report.unchecked() if "time budget" not in line]
    names = ", ".join(report.rewards)
    lines = [f"preflight: {names}: no property failed on {rows} dataset row{'s' * (rows != 1)} (a quick check: "
             f"grpo-run check runs the full suite)" + (f"; not checked or only in part:" if unchecked else "")]
    lines += [f"preflight:   {line}" for line in unchecked]
    lines += [f"preflight: warning: {line}" for line in report.warnings()]
    return lines


def format_report(report: CheckReport, color: bool = False, width: int | None = None) -> str:
    """The report as text: a table of property x reward, then each failure with its counterexample."""
    rewards = report.rewards
    rows = [row for row in _ROWS if any(_row_of(r.property) == row for r in report.results)]
    rows += [p for p in dict.fromkeys(_row_of(r.property) for r in report.results) if p not in rows]
    cells = {
        (row, reward): _cell([r for r in report.results if r.reward == reward and _row_of(r.property) == row])
        for row in rows for reward in rewards
    }
    failures = report.failures
    counts = {status: sum(r.status == status for r in report.results) for status in (PASS, FAIL, SKIP, WARN)}
    warned = f", {counts[WARN]} with warnings" if counts[WARN] else ""
    partly = sum(r.status == PASS and bool(_not_checked(r)) for r in report.results)
    warned = (f", {partly} checked only in part" if partly else "") + warned
    summary = (f"{counts[FAIL]} failed, {counts[PASS]} passed, {counts[SKIP]} not checked{warned} in "
               f"{report.seconds:.1f} s (seed {report.seed}; repeat with --seed {report.seed})")
    details = []
    for r in failures:
        lines = [f"{r.reward} / {r.property}", f"  {r.message}"]
        if r.counterexample:
            lines.append("  counterexample:")
            for key, value in r.counterexample.items():
                lines.append(f"    {key}: {_show(value)}")
        details.append("\n".join(lines))
    if report.warnings():
        details.append("warnings:\n" + "\n".join(f"  {line}" for line in report.warnings()))
    if report.unchecked():
        details.append("not checked, or checked only in part:\n" + "\n".join(f"  {line}" for line in report.unchecked()))
    notes = [f"{r.reward} / {r.property}: {r.status}, {r.message}" for r in report.results
             if r.status == PASS and r.message and not _not_checked(r)]
    if notes:
        details.append("notes:\n" + "\n".join(f"  {note}" for note in notes))
    try:
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text
    except ImportError:  # rich is optional: plain columns
        return _plain_report(rows, rewards, cells, details, summary)
    import io

    out = io.StringIO()
    console = Console(file=out, force_terminal=color, no_color=not color, width=width or 100,
                      color_system="standard" if color else None, highlight=False, soft_wrap=False)
    table = Table(title="reward property checks", title_justify="left")
    table.add_column("property")
    for reward in rewards:
        table.add_column(reward, justify="center")
    for row in rows:
        table.add_row(row, *(Text(cells[row, reward][0], style=cells[row, reward][1]) for reward in rewards))
    console.print(table)
    for text in details:
        console.print(Text(text, style=None), soft_wrap=True)
        console.print()
    console.print(Text(summary, style="bold red" if failures else "bold green"))
    return out.getvalue()


def _plain_report(rows, rewards, cells, details, summary) -> str:
    first = max([len("property")] + [len(r) for r in rows])
    widths = [max(len(reward), 8) for reward in rewards]
    lines = ["  ".join(["property".ljust(first)] + [r.ljust(w) for r, w in zip(rewards, widths)])]
    for row in rows:
        lines.append("  ".join([row.ljust(first)] + [cells[row, r][0].ljust(w) for r, w in zip(rewards, widths)]))
    return "\n".join(lines + [""] + [d + "\n" for d in details] + [summary]) + "\n"


def _show(value: Any) -> str:
    if isinstance(value, str):
        return _clip_repr(value, 200)
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_show(v)}" for k, v in value.items()) + "}"
    return repr(value)
