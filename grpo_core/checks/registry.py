"""The property registry: what one property is (a record), and the plan of properties for one reward.

The report lists properties in the registry's order; the plan runs them in the same order, except that a
``stage="first"`` property runs before the others and a ``stage="last"`` one after them, and ``runs_before``
moves a property earlier in the plan only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from grpo_core.specs import RewardSpec

STAGES = ("first", "budget", "last")


def _always(subject) -> bool:
    return True


def _no_skip(subject) -> str:
    return ""


@dataclass(frozen=True)
class Property:
    """One property: its record in the registry.

    ``run(prop, subject, inputs, deadline)`` checks it on one reward (``RewardUnderTest``) with the inputs drawn
    for it (``Inputs``) and returns a ``PropertyResult``; a property with ``targets`` is run once per target as
    ``run(prop, subject, inputs, deadline, target)``. ``promise`` is the sentence it promises, with ``{bounds}``,
    ``{seconds}`` and the values the property passes filled in.
    """

    name: str  # its line in the report table
    promise: str
    run: Callable[..., Any]
    declare: str = ""  # how a reward declares what the property needs, said where it was not checked
    declared: Callable[[RewardSpec], bool] | None = None  # whether the reward declares it; if not it is skipped
    undeclared: str = ""  # the reason given when it is skipped so
    when: Callable[[Any], bool] = _always  # whether it concerns this reward at all (no line in the report if not)
    skip: Callable[[Any], str] = _no_skip  # why not to run it now, given the results so far ("" to run it)
    targets: Callable[[Any], list[tuple[str, Any]]] | None = None  # (label, target): one run each, "name: label"
    stage: str = "budget"  # "first": a failure stops the others; "budget": shares the time; "last": sees the rest
    runs_before: str = ""  # runs before this property, though reported in its own place
    cost: float = 2.0  # completions scored per example: how a slow reward's check is sized to its time budget
    fixed: int = 0  # completions scored besides the examples (fixed inputs)

    def __post_init__(self) -> None:
        if self.stage not in STAGES:
            raise ValueError(f"property '{self.name}' has stage={self.stage!r}; use one of {', '.join(STAGES)}")
        if self.declared is not None and not self.undeclared:
            raise ValueError(f"property '{self.name}' declares `declared` without `undeclared`: say why it is skipped")


@dataclass(frozen=True)
class Planned:
    """One run of a property on one reward: its result's name, the target it runs on, and why not, if so."""

    prop: Property
    name: str
    target: Any = None
    undeclared: bool = False


class Registry(Mapping):
    """Every property by name, in the order reports list them."""

    def __init__(self, *properties: Property) -> None:
        self._properties: dict[str, Property] = {}
        for prop in properties:
            self.register(prop)

    def __getitem__(self, name: str) -> Property:
        return self._properties[name]

    def __iter__(self) -> Iterator[str]:
        ordered = sorted(self._properties.values(), key=lambda p: STAGES.index(p.stage))
        return iter([p.name for p in ordered])

    def __len__(self) -> int:
        return len(self._properties)

    def register(self, prop: Property, after: str | None = None) -> None:
        """Add ``prop``, at the end of its stage or right after the property named ``after``."""
        if prop.name in self._properties:
            raise ValueError(f"a property named '{prop.name}' is already registered; choose another name")
        for name in (after, prop.runs_before):
            if name and name not in self._properties:
                raise ValueError(f"property '{prop.name}' names '{name}', which is not registered; "
                                 f"registered: {', '.join(self)}")
        items = list(self._properties.items())
        at = len(items) if after is None else [name for name, _ in items].index(after) + 1
        self._properties = dict(items[:at] + [(prop.name, prop)] + items[at:])

    def unregister(self, name: str) -> None:
        del self._properties[name]

    def family(self, result_name: str) -> str:
        """The line of the report a result goes on: a targeted property's runs ("direction: ...") share one."""
        return result_name.split(": ", 1)[0]

    def plan(self, subject) -> list[Planned]:
        """Every run of every property that concerns ``subject``, in the order they run."""
        order = [self[name] for name in self if not self[name].runs_before]
        for name in self:
            prop = self[name]
            if prop.runs_before:
                order.insert(order.index(self[prop.runs_before]), prop)
        planned: list[Planned] = []
        for prop in order:
            if not prop.when(subject):
                continue
            if prop.declared is not None and not prop.declared(subject.spec):
                planned.append(Planned(prop, prop.name, undeclared=True))
            elif prop.targets is not None:
                planned += [Planned(prop, f"{prop.name}: {label}", target) for label, target in prop.targets(subject)]
            else:
                planned.append(Planned(prop, prop.name))
        return planned
