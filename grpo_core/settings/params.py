"""Typed plugin parameters (``params`` everywhere inside): declared once, parsed from the command line, YAML or
Python."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from grpo_core.errors import UsageError

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Param:
    """One parameter of a reward, dataset or profile.

    ``type`` is one of ``int``, ``float``, ``str``, ``bool``; ``choices`` restricts the value.
    ``minimum`` and ``maximum`` bound a number (inclusive): give a maximum wherever a larger value
    could exhaust the machine (a dataset's size, a count of examples per prompt).
    A ``default`` of ``None`` means "not set" (the plugin decides what that means).
    ``unsafe`` lists values that switch off a safety (``Param("sandbox", ..., unsafe=("none",))``): a user may
    still set one, but the checks never pick one when they try other values of the parameter.
    """

    name: str
    default: Any
    type: type = str
    help: str = ""
    choices: tuple | None = None
    minimum: float | None = None
    maximum: float | None = None
    unsafe: tuple = ()

    def parse(self, value: Any, owner: str) -> Any:
        """Return ``value`` converted to this parameter's type, or raise a UsageError naming it."""
        if value is None:
            return None
        where = f"parameter '{self.name}' of {owner}"
        try:
            parsed = _convert(value, self.type)
        except (TypeError, ValueError):
            raise UsageError(
                f"{where} expects {self.type.__name__}, got {value!r}"
                + (f"; choose one of: {', '.join(map(str, self.choices))}" if self.choices else "")
            ) from None
        if self.choices is not None and parsed not in self.choices:
            raise UsageError(
                f"{where} must be one of: {', '.join(map(str, self.choices))}; got {value!r}"
            )
        low, high = self.minimum, self.maximum
        if (low is not None and parsed < low) or (high is not None and parsed > high):
            raise UsageError(f"{where} must be {self.range_text()}; got {parsed}")
        return parsed

    def range_text(self) -> str:
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            return f"between {low:g} and {high:g}"
        return f"at least {low:g}" if low is not None else f"at most {high:g}"

    def describe(self) -> str:
        text = f"{self.name}={self.default}"
        if self.choices:
            text += f" ({'|'.join(map(str, self.choices))})"
        elif self.minimum is not None or self.maximum is not None:
            text += f" ({self.range_text()})"
        return text


def _convert(value: Any, kind: type) -> Any:
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise ValueError(value)
    if kind is int:
        if isinstance(value, bool):
            raise TypeError(value)
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError(value)
            return int(value)
        return int(str(value).strip())
    if kind is float:
        if isinstance(value, bool):
            raise TypeError(value)
        result = float(str(value).strip()) if isinstance(value, str) else float(value)
        return result
    if kind is str:
        if isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float)) for v in value):
            return ",".join(map(str, value))  # a YAML list, as the comma-separated form the command line takes
        if isinstance(value, (dict, list, tuple)):
            raise TypeError(value)
        return str(value)
    return kind(value)


def resolve_params(declared: tuple[Param, ...], params: dict | None, owner: str) -> dict:
    """The ``declared`` parameters at their defaults overlaid with ``params``, each parsed; an unknown name is a
    UsageError."""
    params = dict(params or {})
    by_name = {p.name: p for p in declared}
    for key in params:
        if key not in by_name:
            raise UsageError(
                f"{owner} has no parameter '{key}'"
                + did_you_mean(key, by_name)
                + f"; its parameters: {', '.join(by_name) or '(none)'}"
            )
    return {p.name: p.parse(params[p.name], owner) if p.name in params else p.default for p in declared}


def did_you_mean(word: str, choices) -> str:
    """`` (did you mean 'NAME'?)`` for the choice ``word`` most likely misspells, or nothing."""
    close = closest(word, choices)
    return f" (did you mean '{close}'?)" if close else ""


def closest(word: str, choices) -> str | None:
    """The choice ``word`` most likely stands for: one that differs from it by a plural, else the closest of those
    that start with it (``reward``: ``rewards``, not ``scale_rewards``), else the closest by spelling."""
    choices = [str(c) for c in choices]
    lower = word.lower()
    forms = {lower + "s", lower + "es", lower[:-1] if lower.endswith("s") else lower}
    plural = [c for c in choices if c.lower() in forms and c.lower() != lower]
    if plural:
        return plural[0]
    if len(word) >= 3:
        started = [c for c in choices if c.lower().startswith(lower)]
        if started:
            return max(started, key=lambda c: difflib.SequenceMatcher(None, lower, c.lower()).ratio())
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return close[0] if close else None
