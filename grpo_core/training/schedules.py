"""Reward weights that change during training: a schedule by step (linear, cosine, steps) or adaptive on the
reward's rolling success rate, applied to TRL's ``reward_weights`` by a trainer callback.

A config file spells them ``reward_schedules: {math: {kind: adaptive, window: 32}, ...}``; the command line
``--reward-weight math=adaptive``, ``--reward-weight xml-format=linear:start=1,end=0.2`` or
``--reward-weight length=steps:0=1,20=0.3`` (or a YAML mapping,
``--reward-weight 'math={kind: adaptive, low: 0.2}'``). Steps count from 0 within the stage being trained.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from grpo_core.errors import UsageError
from grpo_core.settings.syntax import spelled_name
from grpo_core.training import trl_contract

# Each kind's fields: None marks a field that must be given; other values are the defaults.
KINDS: dict[str, dict] = {
    "linear": {"start": None, "end": None, "steps": 0},
    "cosine": {"start": None, "end": None, "steps": 0},
    "steps": {"weights": None},
    "adaptive": {"window": 32, "low": 0.3, "high": 0.8, "raise_to": None, "lower_to": None, "success": None},
}
# Adaptive defaults relative to the reward's own weight: twice it while failing, half of it once learned.
RAISE_FACTOR, LOWER_FACTOR = 2.0, 0.5


@dataclass
class Schedule:
    """One reward's weight over a stage: ``weight(step, total)`` for the step about to be trained.

    ``observe(scores)`` sees each generation batch's scores of the reward (adaptive kinds use them);
    ``state()``/``restore()`` carry what the weight depends on through a checkpoint.
    """

    reward: str
    kind: str
    fields: dict
    base: float = 1.0  # the reward's own weight
    current: float = 0.0
    outcomes: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.current = self.base  # an adaptive weight starts at the reward's own

    def weight(self, step: int, total: int) -> float:
        if self.kind in ("linear", "cosine"):
            start, end = self.fields["start"], self.fields["end"]
            span = (self.fields["steps"] or total) - 1
            progress = min(1.0, max(0, step) / span) if span > 0 else float(step > 0)
            if self.kind == "cosine":
                progress = (1 - math.cos(math.pi * progress)) / 2
            return start * (1 - progress) + end * progress  # exactly ``end`` once the ramp is over
        if self.kind == "steps":
            due = [weight for at, weight in self.fields["weights"] if at <= step]
            return due[-1] if due else self.base
        return self.current

    def observe(self, scores) -> None:
        """Adaptive: record which scores count as a success and move the weight when the rate crosses a threshold."""
        if self.kind != "adaptive":
            return
        threshold = self.fields["success"]
        for score in scores:
            if score is not None and math.isfinite(score):
                self.outcomes.append(1 if score >= threshold - 1e-9 else 0)
        del self.outcomes[:-self.fields["window"]]
        if self.outcomes:
            rate = sum(self.outcomes) / len(self.outcomes)
            if rate < self.fields["low"]:
                self.current = self.fields["raise_to"]
            elif rate > self.fields["high"]:
                self.current = self.fields["lower_to"]

    def success_rate(self) -> float | None:
        return sum(self.outcomes) / len(self.outcomes) if self.outcomes else None

    def state(self) -> dict:
        return {"current": self.current, "outcomes": list(self.outcomes)}

    def restore(self, state: dict) -> None:
        if self.kind == "adaptive" and state:
            self.current = float(state.get("current", self.current))
            self.outcomes = [int(bool(o)) for o in state.get("outcomes", [])][-self.fields["window"]:]

    def describe(self) -> dict:
        fields = dict(self.fields)
        if self.kind == "steps":
            fields["weights"] = {at: weight for at, weight in fields["weights"]}
        return {"kind": self.kind, **fields}


def constant_weights(declared: dict, selected) -> dict[str, float]:
    """The plain numbers among ``reward_schedules`` (``--reward-weight math=2``) of selected rewards: fixed weights."""
    aliases = {**{spelled_name(name): name for name in selected}, **{name: name for name in selected}}
    return {aliases[name]: value for name, value in (declared or {}).items()
            if name in aliases and isinstance(value, (int, float)) and not isinstance(value, bool)}


def build_schedules(declared: dict, rewards, where: str = "reward_schedules") -> dict[str, Schedule]:
    """The ``reward_schedules`` mapping checked against the selected rewards: reward name -> Schedule."""
    by_name = {**{getattr(r, "selected", r.__name__): r for r in rewards}, **{r.__name__: r for r in rewards}}
    schedules = {}
    for name, value in (declared or {}).items():
        if name not in by_name:
            raise UsageError(f"{where} gives a schedule for reward '{name}', which is not selected here (selected: "
                             f"{', '.join(by_name) or 'none'}); add it to the rewards or remove its schedule")
        reward = by_name[name]
        schedule = parse_schedule(value, name, float(reward.weight), reward.spec.bounds, where)
        if schedule is not None:
            schedules[reward.__name__] = schedule
    return schedules


def parse_schedule(value, name: str, base: float, bounds=(0.0, 1.0), where: str = "reward_schedules"):
    """One reward's schedule from its declared value (a number is a constant weight: no schedule)."""
    where = f"{where} of '{name}'"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        _weight(value, "weight", where)
        return None
    if isinstance(value, str):
        value = {"kind": value}
    if not isinstance(value, dict):
        raise UsageError(f"{where} must be a mapping like {{kind: linear, start: 1.0, end: 0.2}}, got {value!r}")
    value = dict(value)
    kind = value.pop("kind", None)
    if kind not in KINDS:
        raise UsageError(f"{where}: unknown kind {kind!r}; use one of {', '.join(KINDS)}")
    expected = KINDS[kind]
    unknown = sorted(set(map(str, value)) - set(expected))
    if unknown:
        raise UsageError(f"{where}: '{unknown[0]}' is not a field of kind {kind}; its fields are "
                         f"{', '.join(expected)}")
    missing = [key for key, default in expected.items() if default is None and key not in value
               and not (kind == "adaptive")]
    if missing:
        raise UsageError(f"{where}: kind {kind} needs '{missing[0]}'; give it like "
                         f"{{kind: {kind}, {', '.join(f'{k}: ...' for k in expected if expected[k] is None)}}}")
    fields = {**expected, **value}
    if kind in ("linear", "cosine"):
        fields["start"], fields["end"] = _weight(fields["start"], "start", where), _weight(fields["end"], "end", where)
        fields["steps"] = _count(fields["steps"], "steps", where, minimum=0)
    elif kind == "steps":
        fields["weights"] = _step_weights(fields["weights"], where)
    else:
        fields["window"] = _count(fields["window"], "window", where, minimum=1)
        for key in ("low", "high"):
            fields[key] = _fraction(fields[key], key, where)
        if fields["low"] > fields["high"]:
            raise UsageError(f"{where}: low={fields['low']:g} is above high={fields['high']:g}; the weight rises "
                             "below low and falls above high, so make low <= high")
        fields["raise_to"] = _weight(base * RAISE_FACTOR if fields["raise_to"] is None else fields["raise_to"],
                                     "raise_to", where)
        fields["lower_to"] = _weight(base * LOWER_FACTOR if fields["lower_to"] is None else fields["lower_to"],
                                     "lower_to", where)
        success = bounds[1] if fields["success"] is None else fields["success"]
        fields["success"] = _number(success, "success", where)
    return Schedule(name, kind, fields, base)


def _number(value, key: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UsageError(f"{where}: '{key}' must be a number, got {value!r}")
    return float(value)


def _weight(value, key: str, where: str) -> float:
    number = _number(value, key, where)
    if number < 0:
        raise UsageError(f"{where}: '{key}' is {value!r}; a weight must be >= 0")
    return number


def _fraction(value, key: str, where: str) -> float:
    number = _number(value, key, where)
    if not 0 <= number <= 1:
        raise UsageError(f"{where}: '{key}' is {value!r}; it is a success rate, between 0 and 1")
    return number


def _count(value, key: str, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise UsageError(f"{where}: '{key}' must be a whole number >= {minimum}, got {value!r}")
    return value


def _step_weights(value, where: str) -> list[tuple[int, float]]:
    if not isinstance(value, dict) or not value:
        raise UsageError(f"{where}: 'weights' must map a step to the weight from that step on, like "
                         f"{{0: 1.0, 20: 0.3}}, got {value!r}")
    pairs = []
    for at, weight in value.items():
        try:
            step = int(at)
        except (TypeError, ValueError):
            raise UsageError(f"{where}: step {at!r} in 'weights' is not a whole number") from None
        if step < 0:
            raise UsageError(f"{where}: step {at!r} in 'weights' is negative; steps count from 0")
        pairs.append((step, _weight(weight, f"weights[{at}]", where)))
    return sorted(pairs)


def adaptive_observer(rewards, schedules: dict[str, Schedule]):
    """The observer of each training batch's (completions x rewards) table that feeds the adaptive schedules their
    success rates (second of ``build.reward_table_changes``: it sees a control run's scores); None when no schedule
    is adaptive."""
    names = [r.__name__ for r in rewards]
    if not any(s.kind == "adaptive" for s in schedules.values()):
        return None

    def observe(table, *batch):
        rows = table.detach().float().cpu().tolist()
        for i, name in enumerate(names):
            if name in schedules:
                schedules[name].observe([row[i] for row in rows])
        return table

    return observe


def weights_callback(trainer, rewards, schedules: dict[str, Schedule]):
    """The trainer callback that sets ``trainer.reward_weights`` before each step, logs ``weights/<reward>`` and
    stores the schedules' state with each checkpoint (as a curriculum stores its level)."""
    from transformers import TrainerCallback
    from transformers.trainer_callback import ExportableState

    names = [r.__name__ for r in rewards]

    class RewardWeightsCallback(TrainerCallback, ExportableState):
        """Moves TRL's ``reward_weights`` along each reward's schedule; the reward functions are untouched."""

        def __init__(self) -> None:
            self.weights = [float(r.weight) for r in rewards]

        def state(self) -> dict:
            return {"args": {}, "attributes": {"schedules": {n: s.state() for n, s in schedules.items()}}}

        def on_train_begin(self, args, state, control, **kwargs):
            stored = trl_contract.stored_attributes(state, type(self).__name__).get("schedules") or {}
            for name, saved in stored.items():
                if name in schedules:  # resuming: continue with the checkpoint's weights
                    schedules[name].restore(saved)
            self._apply(state)

        def on_step_begin(self, args, state, control, **kwargs):
            self._apply(state)

        def _apply(self, state) -> None:
            for i, name in enumerate(names):
                if name in schedules:
                    self.weights[i] = float(schedules[name].weight(state.global_step, state.max_steps))
            trl_contract.set_reward_weights(trainer, self.weights)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs is None or "reward" not in logs:
                return
            for name, weight in zip(names, self.weights):
                logs[f"weights/{name}"] = weight
            for name, schedule in schedules.items():
                if schedule.kind == "adaptive" and schedule.success_rate() is not None:
                    logs[f"weights/{name}/success_rate"] = schedule.success_rate()

    return RewardWeightsCallback()
