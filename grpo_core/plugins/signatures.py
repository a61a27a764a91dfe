"""Rewards written for TRL, read from their signatures: functions TRL calls with keywords, and factories that make one.

A function that names ``completions``, ``prompts`` or ``completion_ids`` is called as TRL calls it (see
``Reward.fit_dataset``). A factory (a function annotated ``-> Callable``, or named ``get_...`` with no ``completion``
parameter, as TRL's ``get_soft_overlong_punishment`` and open-r1's ``get_cosine_scaled_reward``) takes its arguments
as the reward's parameters (``--reward-arg NAME.max_completion_len=512``) and what it returns is the reward; its range
is the ``bounds`` parameter (``--reward-arg NAME.bounds=-1,0``) unless what it returns declares ``.bounds``.
"""

from __future__ import annotations

import inspect
import math
import re
from typing import Callable

from grpo_core.errors import UsageError
from grpo_core.settings.params import Param

TRL_NAMES = ("prompts", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric", "environments")
BATCH_NAMES = ("completions", "prompts", "completion_ids")


def is_trl_call(parameters: list[inspect.Parameter]) -> bool:
    """A function TRL calls with keywords: it names one of TRL's batch arguments."""
    return any(p.name in BATCH_NAMES for p in parameters)


def is_factory(func: Callable, signature: inspect.Signature) -> bool:
    """A function that makes a reward: annotated ``-> Callable``, or named ``get_...`` with no ``completion``."""
    if is_trl_call(list(signature.parameters.values())):
        return False
    returns = signature.return_annotation
    if returns is not inspect.Signature.empty and "Callable" in str(returns):
        return True
    return getattr(func, "__name__", "").startswith("get_") and "completion" not in signature.parameters


def column_params(columns: tuple[str, ...], params: tuple[Param, ...]) -> tuple[Param, ...]:
    """A ``COLUMN_column`` parameter for each column the function reads, so any dataset's column can stand for it."""
    return tuple(Param(f"{c}_column", None, str, f"the dataset column read as '{c}' (default: '{c}')")
                 for c in columns if f"{c}_column" not in {p.name for p in params})


def hinted_shape(signature: inspect.Signature) -> str:
    """The completion shape the ``completions`` type hint names: "chat" for message dicts, "text" for strings."""
    hint = signature.parameters.get("completions")
    text = "" if hint is None or hint.annotation is inspect.Parameter.empty else str(hint.annotation)
    return "chat" if "dict" in text else "text" if re.search(r"\bstr\b", text) else ""


class FactoryReward:
    """The reward a factory makes, called with TRL's keywords: the factory's own arguments (the reward's parameters)
    make it, once per set of values, and the rest reach it as TRL would pass them."""

    def __init__(self, factory: Callable, names: tuple[str, ...]) -> None:
        self.factory, self.names = factory, names
        self.__name__ = getattr(factory, "__name__", "factory")
        self._made: dict = {}

    def make(self, arguments: dict):
        key = repr(sorted(arguments.items()))
        if key not in self._made:
            self._made[key] = self.factory(**{k: v for k, v in arguments.items() if v is not None})
        return self._made[key]

    def __call__(self, **kwargs):
        made = self.make({name: kwargs.pop(name, None) for name in self.names})
        accepted = inspect.signature(made).parameters
        takes_all = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
        return made(**{k: v for k, v in kwargs.items() if takes_all or k in accepted})

    def __reduce__(self):
        return FactoryReward, (self.factory, self.names)


def factory_parts(factory: Callable, signature: inspect.Signature, where: str, param_type) -> dict:
    """What a ``PathRewardSpec`` of a factory holds: its parameters (the factory's arguments, ``bounds`` and the
    columns' remaps), the columns and completion shape of what it makes, the hidden parameters never passed on, and
    the function."""
    params, required = [], []
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty:
            required.append(p.name)
            p = p.replace(default=None)
        params.append(Param(p.name, p.default, param_type(p) or str, f"argument of {factory.__name__}"
                            + (" (required)" if p.name in required else f" (default {p.default!r})")))
    function = FactoryReward(factory, tuple(p.name for p in params))
    columns, shape, bounds = (), "", None
    # What it makes, to read the columns that reads: made with its defaults, and 1 (or 1.0, "") for an argument
    # without one; only its signature is kept (a factory that refuses those values reads no column here)
    placeholders = {p.name: {int: 1, float: 1.0, bool: False}.get(p.type, "") for p in params if p.name in required}
    try:
        made = FactoryReward(factory, function.names).make(placeholders)
        made_signature = inspect.signature(made)
    except Exception as error:
        if not required:
            raise UsageError(f"{where}: calling {factory.__name__}() with its defaults raised "
                             f"{type(error).__name__}: {error}") from None
    else:
        columns = tuple(p.name for p in made_signature.parameters.values() if p.default is p.empty
                        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in TRL_NAMES)
        shape, bounds = hinted_shape(made_signature), getattr(made, "bounds", None)
    remaps = column_params(columns, tuple(params))
    declared = () if bounds is not None else (Param("bounds", "0,1", str, "LOW,HIGH: the range its scores stay in"),)

    def validate(values: dict) -> None:
        missing = [name for name in required if values.get(name) is None]
        if missing:
            raise ValueError(f"{factory.__name__} needs {', '.join(missing)}: give "
                             + " ".join(f"--reward-arg NAME.{name}=VALUE" for name in missing))
        read_bounds(values.get("bounds", "0,1"))

    return {"func": function, "params": tuple(params) + remaps + declared, "columns": columns,
            "hidden": tuple(p.name for p in remaps + declared), "completion_shape": shape, "validate": validate,
            "bounds": tuple(bounds) if bounds is not None else (0.0, 1.0),
            "bounds_for": None if bounds is not None else bounds_of}


def bounds_of(values: dict) -> tuple[float, float]:
    """The range the ``bounds`` parameter gives (``0,1`` when unset)."""
    return read_bounds(values.get("bounds") or "0,1")


def read_bounds(text: str) -> tuple[float, float]:
    """``"LOW,HIGH"`` as two finite floats, low < high; a ValueError naming the value otherwise."""
    try:
        low, high = (float(part) for part in str(text).split(","))
    except ValueError:
        raise ValueError(f"bounds must be LOW,HIGH, e.g. bounds=-1,0; got {text!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"bounds must be two finite numbers with LOW < HIGH, got {text!r}")
    return low, high
