"""Rewards written for TRL, read from their signatures: functions TRL calls with keywords, and factories that make one.

A function that names ``completions``, ``prompts`` or ``completion_ids`` is called as TRL calls it (see
``Reward.fit_dataset``). A factory (a function annotated ``-> Callable``, or named ``get_...`` with no ``completion``
parameter, as TRL's ``get_soft_overlong_punishment`` and open-r1's ``get_cosine_scaled_reward``) takes its arguments
as the reward's parameters (``--reward-arg NAME.max_completion_len=512``) and what it returns is the reward; its range
is the ``bounds`` parameter (``--reward-arg NAME.bounds=-1,0``) unless what it returns declares ``.bounds``.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import re
from typing import Callable

from grpo_core.errors import UsageError
from grpo_core.rewards.reward import completion_text, run_coroutine
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
            "remaps": tuple(p.name for p in remaps + declared), "completion_shape": shape, "validate": validate,
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


# Rewards written for other trainers, each called through one adapter as TRL would call a reward: verl's
# compute_score (one response at a time), OpenRLHF's reward_func (queries, prompts, labels) and a verifiers rubric
# function (the completion as messages; sync or async).

class ForeignReward:
    """A reward written for another trainer, called with TRL's keywords (``completions``, ``prompts``, the columns,
    ``log_metric``): ``kind`` names the trainer, ``columns`` the columns it reads (each remappable)."""

    kind = ""
    columns: tuple[str, ...] = ()

    def __init__(self, func: Callable) -> None:
        self.func = func
        self.__name__ = getattr(func, "__name__", self.kind)
        self.accepted, self.takes_all = _accepted(func)

    def __reduce__(self):
        return type(self), (self.func,)

    def passed(self, **arguments) -> dict:
        return {k: v for k, v in arguments.items() if self.takes_all or k in self.accepted}


class VerlReward(ForeignReward):
    """verl's ``compute_score(data_source, solution_str, ground_truth, extra_info)``, once per completion: the
    completion's text, the row's answer (``ground_truth_column``, the answer column by default), the dataset's name
    and the row; a dict's ``score`` is the reward and its other numbers are logged as ``rewards/NAME/KEY``."""

    kind, columns = "verl", ("ground_truth",)

    def __call__(self, completions, ground_truth, data_source="", log_metric=None, reward_name="", **columns):
        rows = [{k: v[i] for k, v in columns.items() if isinstance(v, list) and len(v) == len(completions)
                 and k not in TRL_NAMES} for i in range(len(completions))]
        values = [self.func(**self.passed(data_source=data_source, solution_str=_text(c), ground_truth=truth,
                                          extra_info=row)) for c, truth, row in zip(completions, ground_truth, rows)]
        values = _awaited(values)
        logged: dict[str, list[float]] = {}
        scores = []
        for value in values:
            if isinstance(value, dict):
                for key, number in value.items():
                    if key != "score" and isinstance(number, (int, float)) and not isinstance(number, bool):
                        logged.setdefault(key, []).append(float(number))
                value = value.get("score")
            scores.append(value)
        if log_metric is not None:
            for key, numbers in logged.items():
                log_metric(f"rewards/{reward_name}/{key}", sum(numbers) / len(numbers))
        return scores


class OpenRLHFReward(ForeignReward):
    """OpenRLHF's ``reward_func(queries, prompts, labels)``: prompt and completion text, the prompts, the row's answers
    (``labels_column``, the answer column by default); a tensor, a list or a dict's ``rewards`` is the reward."""

    kind, columns = "openrlhf", ("labels",)

    def __call__(self, completions, labels, prompts=None, **columns):
        asked = [_prompt_text(p) for p in (prompts or [""] * len(completions))]
        texts = [_text(c) for c in completions]
        value = self.func(**self.passed(queries=[p + t for p, t in zip(asked, texts)], prompts=asked, labels=labels))
        value = _awaited([value])[0]
        if isinstance(value, dict):
            value = value.get("rewards", value.get("scores"))
        return value.tolist() if hasattr(value, "tolist") else list(value)


class VerifiersReward(ForeignReward):
    """A verifiers rubric function, ``(completion, answer, prompt, info, state, ...)``, sync or async, once per
    completion: the completion as a message list, the prompt as messages, the row's answer and ``info`` where the
    row has them, and a fresh ``state``."""

    kind = "verifiers"

    def __call__(self, completions, prompts=None, **columns):
        n = len(completions)
        values = []
        for i, completion in enumerate(completions):
            messages = completion if isinstance(completion, list) else [{"role": "assistant", "content": completion}]
            prompt = (prompts or [""] * n)[i]
            row = {k: v[i] for k, v in columns.items() if isinstance(v, list) and len(v) == n and k not in TRL_NAMES}
            values.append(self.func(**self.passed(
                completion=messages, prompt=prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}],
                answer=row.get("answer", ""), info=row.get("info") or {}, state={}, task=row.get("task", "default"))))
        return _awaited(values)


# What each trainer passes by its own names: never a dataset column of the reward's
FOREIGN_NAMES = {"verl": ("data_source", "solution_str", "ground_truth", "extra_info"),
                 "openrlhf": ("queries", "prompts", "labels"),
                 "verifiers": ("completion", "prompt", "answer", "info", "state", "task", "parser")}


def foreign_parts(adapter: type[ForeignReward], func: Callable, signature: inspect.Signature, read) -> dict:
    """What a ``PathRewardSpec`` of a reward written for another trainer holds: the adapter around ``func``, the
    columns it reads (the trainer's answer argument from the answer column by default, each remappable) and the
    function's own parameters (``read(parameters)`` gives its columns and parameters)."""
    columns, params = read([p for p in signature.parameters.values() if p.name not in FOREIGN_NAMES[adapter.kind]])
    taken = set(signature.parameters)  # a verifiers function reads the row's answer, info and task where it names them
    own = ("answer",) if adapter.kind == "verifiers" and "answer" in taken else adapter.columns
    columns = tuple(dict.fromkeys(own + columns))
    remaps = tuple(Param(f"{c}_column", "answer" if c in ("ground_truth", "labels") else None, str,
                         f"the dataset column read as '{c}'") for c in columns)
    optional = tuple(c for c in ("info", "task") if c in taken) if adapter.kind == "verifiers" else ()
    return {"func": adapter(func), "columns": columns, "params": params + remaps, "optional_columns": optional,
            "remaps": tuple(p.name for p in remaps), "completion_shape": "" if adapter.kind == "verifiers" else "text"}


# How a reward named by path was read: each kind's label in listings; ``fn.signature = KIND`` picks one of SIGNATURES
SIGNATURES = ("grpo-core", "trl", "verl", "openrlhf", "verifiers")
FORMS = {"grpo-core": "grpo-core", "trl": "TRL keyword", "factory": "TRL factory", "verl": "verl compute_score",
         "openrlhf": "OpenRLHF reward_func", "verifiers": "verifiers rubric"}
ADAPTERS = {"verl": VerlReward, "openrlhf": OpenRLHFReward, "verifiers": VerifiersReward}
_TAKES = {"trl": "completions", "verl": "solution_str", "openrlhf": "queries", "verifiers": "completion"}


def read_as(func: Callable, signature: inspect.Signature, where: str) -> tuple[str, bool]:
    """``(kind, declared)``: the form a function is read as, one of SIGNATURES or "factory", and whether its
    ``.signature`` attribute said so (else its signature did, see ``foreign_kind``)."""
    declared = getattr(func, "signature", None)
    if declared is not None and not callable(declared):
        if declared not in SIGNATURES:
            raise UsageError(f"{where}: its .signature is {declared!r}; set it to one of "
                             + ", ".join(repr(s) for s in SIGNATURES))
        names = signature.parameters
        wanted = _TAKES.get(declared)
        if wanted and wanted not in names and not any(p.kind is p.VAR_KEYWORD for p in names.values()):
            raise UsageError(f"{where}: its .signature is {declared!r}, but it takes no '{wanted}' (nor **kwargs), "
                             f"which {declared} passes it; fix the parameter's name, or drop the .signature")
        return declared, True
    adapter = foreign_kind(func, signature)
    if adapter is not None:
        return adapter.kind, False
    if is_factory(func, signature):
        return "factory", False
    return ("trl" if is_trl_call(list(signature.parameters.values())) else "grpo-core"), False


def may_be_messages(signature: inspect.Signature) -> bool:
    """Read as grpo-core's own form, a first parameter named ``completion`` with no type hint may be verifiers'
    message list: the one signature the trainers share."""
    first = next(iter(signature.parameters.values()), None)
    return first is not None and first.name == "completion" and first.annotation is inspect.Parameter.empty


# Indexing a text as a message list: "abc"[-1]["content"], "abc".get("content"), ""[-1]
_TEXT_AS_MESSAGES = re.compile(r"string ind|'str' object has no attribute")


class TextCompletion:
    """A reward in grpo-core's own form whose first parameter, ``completion``, gets the completion's text: where it
    fails indexing that text as a message list (as a verifiers rubric function reads it), the error says how to have
    it read as verifiers' (``fn.signature = 'verifiers'``). It is the function otherwise, as ``inspect`` sees it too."""

    def __init__(self, func: Callable, name: str) -> None:
        self.func, self.name = func, name
        self.__name__ = self.__qualname__ = name
        self.__module__ = getattr(func, "__module__", None)  # "__main__" stays refused where a worker must import it
        self.__doc__ = getattr(func, "__doc__", None)

    @property
    def __wrapped__(self) -> Callable:
        return self.func

    def __call__(self, *args, **kwargs):
        try:
            return self.func(*args, **kwargs)
        except (TypeError, AttributeError, IndexError) as error:
            if type(error) not in (TypeError, AttributeError, IndexError) or not _TEXT_AS_MESSAGES.search(str(error)):
                raise
            raise type(error)(f"{error} ({self.name} was read as grpo-core's own signature, its first parameter the "
                              f"completion's text; if {self.name} was written for verifiers (the completion a message "
                              f"list), set {self.name}.signature = 'verifiers' in its file)") from error

    def __reduce__(self):
        return TextCompletion, (self.func, self.name)


def foreign_kind(func: Callable, signature: inspect.Signature) -> type[ForeignReward] | None:
    """The adapter a function's signature asks for, or None for TRL's and grpo-core's own."""
    names = set(signature.parameters)
    if {"solution_str", "ground_truth"} <= names:
        return VerlReward
    if "queries" in names and names & {"labels", "prompts"}:
        return OpenRLHFReward
    first = next(iter(signature.parameters), "")
    if first == "completion" and (inspect.iscoroutinefunction(func) or names & {"state", "info", "parser", "task"}):
        return VerifiersReward
    return None


def _accepted(func) -> tuple[set, bool]:
    parameters = inspect.signature(func).parameters
    return set(parameters), any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def _prompt_text(prompt) -> str:
    """A prompt as text: a chat prompt's messages, each one's content on its own line."""
    if isinstance(prompt, list):
        return "\n".join(_text(m.get("content")) if isinstance(m, dict) else str(m) for m in prompt)
    return _text(prompt)


def _text(value) -> str:
    return value if isinstance(value, str) else completion_text(value)


def _awaited(values: list) -> list:
    """``values`` with each coroutine run to its result, all of them at once."""
    if not any(inspect.isawaitable(v) for v in values):
        return values
    async def gather():
        return await asyncio.gather(*(v if inspect.isawaitable(v) else _ready(v) for v in values))

    return list(run_coroutine(gather()))


async def _ready(value):
    return value
