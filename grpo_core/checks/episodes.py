"""The environment under test: fresh instances, an episode run from a dataset row (``reset``, each tool call under a
time limit, ``get_reward``), and an episode as a counterexample shows it."""

from __future__ import annotations

import asyncio
import inspect
import math
import numbers
from dataclasses import dataclass, field
from typing import Any

from grpo_core.checks.display import clip, clip_repr, first_line
from grpo_core.checks.executor import Hung, watched
from grpo_core.checks.progress import Quiet
from grpo_core.checks.results import PropertyResult
from grpo_core.checks.tool_args import Call, gold_column, tool_parameters
from grpo_core.plugins.loading import Environment
from grpo_core.settings.declared import DEFAULT_TOOL_TURNS

DEFAULT_CALL_TIMEOUT_S = 5.0  # seconds one tool call (or reset, or get_reward) may take in the checks


@dataclass
class Episode:
    """One episode: the row it started from, the calls made, what each gave back, and the reward it earned."""

    row: dict
    calls: list[Call] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)
    raised: list[str] = field(default_factory=list)  # per call: "" or the exception that left the tool
    started: Any = None  # what reset returned
    reward: Any = None
    scored: bool = False

    def trace(self) -> list[str]:
        """Each call as ``tool(arg=value, ...) -> output``."""
        lines = []
        for (tool, args), output, raised in zip(self.calls, self.outputs, self.raised):
            shown = ", ".join(f"{key}={clip_repr(value, 40)}" for key, value in args.items())
            lines.append(f"{tool}({shown}) " + (f"raised {raised}" if raised else f"-> {clip_repr(output, 120)}"))
        return lines

    def shown(self, label: str = "") -> dict:
        """The episode as a counterexample: the row, the calls with their outputs, the reward."""
        out: dict = {"row": {key: clip(value, 160) for key, value in self.row.items()}}
        if label:
            out["episode"] = label
        if self.started is not None:
            out["reset returned"] = self.started
        out["calls"] = self.trace() or "(no tool call)"
        if self.scored:
            out["reward"] = self.reward
        return out

    def fingerprint(self) -> tuple:
        """What two runs of the same episode must share: reset's text, the outputs, what raised, the reward."""
        return repr(self.started), [repr(o) for o in self.outputs], list(self.raised), repr(self.reward)


class EpisodeFailed(Exception):
    """The class itself failed (``__init__``, ``reset``, ``get_reward``, or the declared gold episode raised)."""

    def __init__(self, message: str, episode: Episode) -> None:
        super().__init__(message)
        self.message, self.episode = message, episode


class ToolHung(Hung):
    """A call gave no answer within the limit; the thread it runs in is abandoned."""

    def __init__(self, seconds: float, what: str, episode: Episode) -> None:
        super().__init__(seconds)
        self.what, self.episode = what, episode


def _run(method, kwargs: dict):
    result = method(**kwargs)
    return asyncio.run(result) if inspect.iscoroutine(result) else result


class EnvironmentUnderTest:
    """An environment with its parameters bound, the rows its episodes start from, and every episode's reward seen
    (for the bounds)."""

    def __init__(self, environment: Environment, rows: list[dict], call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
                 turns: int = DEFAULT_TOOL_TURNS) -> None:
        self.environment, self.spec, self.rows = environment, environment.spec, rows
        self.name = environment.name
        self.lo, self.hi = (float(b) for b in self.spec.bounds)
        cls = self.spec.environment_class
        self.tools = {name: tool_parameters(getattr(cls, name)) for name in self.spec.tool_names()}
        self.has_reward = environment.has_reward
        self.timeout, self.turns = call_timeout_s, turns
        self.hung: ToolHung | None = None
        self.hung_in = ""  # the property that was running when a call hung
        self.seen: list[Episode] = []  # every scored episode, for the bounds
        self.progress = Quiet()  # the property search reports each example to it, as for a reward

    def result(self, prop: str, status: str, message: str = "", example: dict | None = None, examples: int = 0,
               note: str = "") -> PropertyResult:
        return PropertyResult(self.name, prop, status, message, example, examples, note=note)

    def gold_of(self, row: dict) -> Any:
        column = gold_column(row, self.spec.columns)
        return None if column is None else row[column]

    def gold_calls(self, row: dict) -> list[Call] | None:
        """The declared gold episode's calls for ``row`` (None when none is declared)."""
        if self.spec.gold_episode is None:
            return None
        try:
            calls = list(self.spec.gold_calls(dict(row), dict(self.environment.params)))
        except Exception as error:
            raise EpisodeFailed(f"gold_episode raised {type(error).__name__}: {first_line(error)}", Episode(row)) from None
        if not all(isinstance(c, (tuple, list)) and len(c) == 2 and isinstance(c[0], str) and isinstance(c[1], dict)
                   for c in calls):
            raise EpisodeFailed("gold_episode must return a list of (tool name, {argument: value}) pairs; it returned "
                                f"{clip_repr(calls, 120)}", Episode(row))
        return [(tool, dict(args)) for tool, args in calls]

    def fresh(self, episode: Episode):
        try:
            return self.environment.make()
        except Exception as error:
            raise EpisodeFailed(f"{self.spec.environment_class.__name__}() raised {type(error).__name__}: "
                                f"{first_line(error)}", episode) from None

    def timed(self, what: str, method, kwargs: dict, episode: Episode):
        try:
            return watched(_run, (method, kwargs), self.timeout)
        except Hung:
            raise ToolHung(self.timeout, what, episode) from None

    def start(self, instance, row: dict, episode: Episode) -> None:
        try:
            episode.started = self.timed("reset", instance.reset, dict(row), episode)
        except Exception as error:
            raise EpisodeFailed(f"reset raised {type(error).__name__}: {first_line(error)}", episode) from None

    def call(self, instance, episode: Episode, tool: str, args: dict) -> None:
        """One tool call, as TRL makes it: arguments it cannot bind answer ``{"error": ...}`` without the tool
        running; an exception out of the tool is recorded in ``episode.raised``."""
        episode.calls.append((tool, args))
        method = getattr(instance, tool, None)
        if method is None:
            raise EpisodeFailed(f"the episode calls '{tool}', which is not a tool of the environment (its tools: "
                                f"{', '.join(self.tools) or 'none'})", episode)
        try:
            inspect.signature(method).bind(**args)
        except TypeError as error:  # TRL answers the model with the error; the tool never runs
            episode.outputs.append({"error": str(error)})
            episode.raised.append("")
            return
        episode.outputs.append(None)
        episode.raised.append("")
        try:
            episode.outputs[-1] = self.timed(tool, method, args, episode)
        except ToolHung:
            episode.outputs[-1] = f"(no answer after {self.timeout:g} s)"
            raise
        except Exception as error:
            episode.raised[-1] = f"{type(error).__name__}: {first_line(error)}"

    def score(self, instance, episode: Episode) -> None:
        if not self.has_reward:
            return
        try:
            episode.reward = self.timed("get_reward", instance.get_reward, {}, episode)
        except Exception as error:
            raise EpisodeFailed(f"get_reward raised {type(error).__name__}: {first_line(error)}", episode) from None
        episode.scored = True
        self.seen.append(episode)

    def run(self, row: dict, calls: list[Call], instance=None, score: bool = True) -> Episode:
        """An episode on ``row`` making ``calls`` on a new instance (or ``instance``, reset with ``row``)."""
        episode = Episode(dict(row))
        instance = self.fresh(episode) if instance is None else instance
        self.start(instance, row, episode)
        for tool, args in calls:
            self.call(instance, episode, tool, args)
        if score:
            self.score(instance, episode)
        return episode


def in_bounds(reward: Any, lo: float, hi: float) -> bool:
    """A reward is a finite real number within ``[lo, hi]``, or None."""
    if reward is None:
        return True
    if isinstance(reward, bool) or not isinstance(reward, numbers.Real):
        return False
    return math.isfinite(float(reward)) and lo <= float(reward) <= hi
