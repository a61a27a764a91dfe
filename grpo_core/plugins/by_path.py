"""Rewards and datasets named by where their function is: ``path/to/file.py:function`` or ``package.module:function``.

A name the registry knows stays that. Otherwise a name with a ``:`` is a path: the text before the last ``:`` is a
file when it ends in ``.py`` or names an existing file, else a dotted module path (imported with the current folder
on the import path, as ``trl grpo --reward_funcs`` does). A ``:`` inside the path itself is not supported.

A reward from a path is named ``STEM:FUNCTION`` for a file (``brevity:score`` for ``./rewards/brevity.py:score``)
and ``MODULE:FUNCTION`` for a module, the same from any folder: that name is its metrics' (``rewards/<name>/mean``),
and ``--reward-arg`` takes it or the name as written. Its signature says what it reads (signatures.read_as): the
first parameter is the completion, parameters without a default are columns, keyword parameters with a number, text
or bool default are parameters; one naming TRL's ``completions`` or written for verl, OpenRLHF or verifiers is called
as that trainer calls it. Attributes say the rest: ``.bounds = (0, 10)``, ``.checks``, ``.timeout``, ``.signature``.

A file is imported once, under a module name made from its absolute path, and its functions pickle as that path and
name (``FileFunction``), so a worker process imports the file itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import math
import os
import re
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable

from grpo_core.errors import UsageError
from grpo_core.plugins.served import remote_spec
from grpo_core.plugins.signatures import (ADAPTERS, FORMS, TRL_NAMES, TextCompletion, column_params, factory_parts,
                                          foreign_parts, hinted_shape, may_be_messages, read_as)
from grpo_core.rewards.declared import RewardChecks
from grpo_core.settings.params import Param, did_you_mean
from grpo_core.settings.syntax import REMOTE_PREFIX, is_path_name, short_name
from grpo_core.specs import DatasetSpec, EnvironmentSpec, LazyCallable, RewardSpec, validate_timeout

EXTRAS = ("prompt", "prompts", "completion_ids")  # what Reward passes by name, never a dataset column
_PARAM_TYPES = (bool, int, float, str)


@dataclass(frozen=True)
class PathRewardSpec(RewardSpec):
    """A reward loaded from a path; ``source`` selects it again from any folder. ``trl_call``: written for TRL, so
    called as TRL calls it (``Reward.fit_dataset``), its completions "chat", "text" or "" (as given)."""

    source: str = ""
    trl_call: bool = False
    completion_shape: str = ""
    remaps: tuple[str, ...] = ()  # parameters made for it (COLUMN_column, bounds): never passed to the function
    dataset_name: str = ""  # the run's dataset, verl's data_source
    read_as: str = ""  # the form its signature (or its .signature) was read as: "verifiers rubric", "TRL keyword", ...


@dataclass(frozen=True)
class PathDatasetSpec(DatasetSpec):
    """A dataset loaded from a path; ``source`` is the absolute spelling that selects it again from any folder."""

    source: str = ""


def resolve_reward_name(name: str, registry) -> RewardSpec:
    """The reward ``name`` selects: a registered one, else one from a file or module path; a UsageError otherwise."""
    table = registry.items["rewards"]
    if name in table or name in registry.duplicates["rewards"]:
        return registry.get("rewards", name)
    if name.startswith(REMOTE_PREFIX):  # a reward served by `grpo-run serve` elsewhere
        return remote_spec(name)
    if ":" not in name:
        if name.endswith(".py"):
            raise UsageError(f"reward '{name}' names a file but no function; write --reward {name}:FUNCTION")
        return registry.get("rewards", name)
    return _cached("reward", name)


def resolve_dataset_name(name: str, registry):
    """The dataset ``name`` selects: a registered one, else ``file.py:function`` or ``module:function``."""
    if name in registry.items["datasets"] or name in registry.duplicates["datasets"] or not is_path_name(name):
        return registry.get("datasets", name)
    return _cached("dataset", name)


def resolve_environment_name(name: str, registry) -> EnvironmentSpec:
    """The environment ``name`` selects: a registered one, else a plain TRL environment class from ``file.py:Class``
    or ``module:Class``."""
    if name in registry.items["environments"] or name in registry.duplicates["environments"] or not is_path_name(name):
        return registry.get("environments", name)
    return _cached("environment", name)


_specs: dict[tuple[str, str], Any] = {}


def _cached(kind: str, name: str):
    source, function, module_name = _locate(kind, name)
    key = (kind, source)
    if key not in _specs:
        found = _attribute(kind, name, _import(kind, name, source, module_name), function, source)
        build = {"reward": _reward_spec, "dataset": _dataset_spec, "environment": _environment_spec}[kind]
        _specs[key] = build(found, short_name(source), source)
    return _specs[key]


def _locate(kind: str, name: str) -> tuple[str, str, str | None]:
    """``(source, function, module name if a module path)``: source is the absolute ``path:function`` for a file."""
    where, _, function = name.rpartition(":")
    if not where or not all(part.isidentifier() for part in function.split(".")):
        raise UsageError(f"{kind} '{name}' is neither installed nor a path; write PATH.py:FUNCTION or "
                         f"package.module:FUNCTION, with the function's name after the ':'")
    if where.endswith(".py") or os.path.isfile(where):
        if ":" in where:
            raise UsageError(f"{kind} '{name}': a ':' inside the path is not supported; move or rename the file "
                             f"so its path has no ':'")
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise UsageError(f"{kind} '{name}': file '{where}' does not exist"
                             + (" (it is a folder)" if os.path.isdir(path) else "") + "; check the path")
        return f"{path}:{function}", function, None
    if os.path.isdir(where):
        raise UsageError(f"{kind} '{name}': '{where}' is a folder; name a file in it, e.g. {where}/FILE.py:{function}")
    if ":" in where or not all(part.isidentifier() for part in where.split(".")):
        raise UsageError(f"{kind} '{name}' is neither installed, nor a file ('{where}' does not exist), nor a module "
                         f"path; check the name (a ':' inside a path is not supported)")
    return f"{where}:{function}", function, where


def module_name_for(path: str) -> str:
    """The stable module name a file is imported under: the same in every process for the same absolute path."""
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    return f"_grpo_file_{stem}_{hashlib.sha1(path.encode()).hexdigest()[:10]}"


def load_file(path: str):
    """The module of file ``path``, executed once per process under :func:`module_name_for`."""
    name = module_name_for(path)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = os.path.dirname(path)
    sys.path.insert(0, folder)  # its sibling modules import, as when the file runs as a script
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout belongs to --json and --dry-run
            spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)
    return module


def _import(kind: str, name: str, source: str, module_name: str | None):
    path = source.rpartition(":")[0]
    try:
        if module_name is None:
            return load_file(path)
        try:
            return importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name.split(".")[0] or os.getcwd() in sys.path:
                raise
            sys.path.insert(0, os.getcwd())  # as `trl grpo --reward_funcs module.func` does; workers inherit it
            return importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as error:
        if module_name is not None and isinstance(error, ModuleNotFoundError) and error.name == module_name:
            raise UsageError(f"{kind} '{name}': there is no module '{module_name}' (looked on the import path and in "
                             f"the current folder); give a file instead, e.g. ./{module_name.replace('.', '/')}.py:"
                             f"{name.rpartition(':')[2]}, or install the package that has it") from None
        what = f"file '{path}'" if module_name is None else f"module '{module_name}'"
        raise UsageError(f"{kind} '{name}': importing {what} failed: {_one_line(error, path)}; fix it, or check "
                         f"it with: python {path if module_name is None else '-c ' + repr('import ' + module_name)}"
                         ) from None


def _one_line(error: BaseException, path: str) -> str:
    """The exception as one line, with the line of ``path`` it came from."""
    lineno = getattr(error, "lineno", None) if isinstance(error, SyntaxError) else None
    for frame in traceback.extract_tb(error.__traceback__):
        if os.path.abspath(frame.filename) == path:
            lineno = frame.lineno
    message = str(error).splitlines()[0] if str(error) else ""
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return text + (f" (line {lineno})" if lineno else "")


def _attribute(kind: str, name: str, module, function: str, source: str):
    found: Any = module
    for part in function.split("."):
        if not hasattr(found, part):
            names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                           and getattr(v, "__module__", None) == module.__name__)
            where = name.rpartition(":")[0]
            raise UsageError(f"{kind} '{name}': '{where}' has no function '{function}'{did_you_mean(function, names)}"
                             f"; its functions: {', '.join(names) or '(none)'}")
        found = getattr(found, part)
    wanted = {"reward": RewardSpec, "dataset": DatasetSpec, "environment": EnvironmentSpec}[kind]
    if not callable(found) and not isinstance(found, wanted):
        raise UsageError(f"{kind} '{name}' is not a function but a {type(found).__name__} value; name a function")
    return found


class FileFunction(LazyCallable):
    """A function of a file, standing for it: it pickles as the file's path and the function's name, so a worker
    process imports the file itself (the module it was imported under exists only in processes that loaded it)."""

    def __init__(self, path: str, name: str, function: Callable | None = None) -> None:
        self.target, self.owner = f"{path}:{name}", f"function '{name}' of '{path}'"
        self._function = function

    @property
    def __wrapped__(self) -> Callable:
        if self._function is None:
            path, _, name = self.target.rpartition(":")
            found: Any = load_file(path)
            for part in name.split("."):
                found = getattr(found, part)
            self._function = found
        return self._function

    def __reduce__(self):
        path, _, name = self.target.rpartition(":")
        return FileFunction, (path, name)


def _picklable(func: Callable, source: str) -> Callable:
    """``func`` as a FileFunction when it comes from the file of ``source`` (an async function never goes to a worker)."""
    path = source.rpartition(":")[0]
    if not os.path.isabs(path) or inspect.iscoroutinefunction(func):
        return func
    if getattr(func, "__module__", None) != module_name_for(path) or not hasattr(func, "__qualname__"):
        return func
    return FileFunction(path, func.__qualname__, func)


def _reward_spec(found, name: str, source: str) -> PathRewardSpec:
    where = f"reward '{name}' ({source})"
    if isinstance(found, RewardSpec):
        fields = {f.name: getattr(found, f.name) for f in dataclasses.fields(RewardSpec)}
        fields.update(name=name, func=_picklable(found.func, source), distribution=source.rpartition(":")[0])
        return PathRewardSpec(**fields, source=source)
    try:
        signature = inspect.signature(found)
    except (TypeError, ValueError):
        raise UsageError(f"{where}: its signature cannot be read; name a plain function") from None
    kind, declared = read_as(found, signature, where)  # grpo-core's, TRL's (or its factory's), verl's, ...
    read = dict(read_as=FORMS[kind] + (" (declared)" if declared else ""), source=source, name=name,
                distribution=source.rpartition(":")[0])
    if kind == "factory":
        return PathRewardSpec(description=_description(found, source), batched=True, trl_call=True, **read,
                              **factory_parts(found, signature, where, _param_type))
    declares = dict(bounds=_bounds(getattr(found, "bounds", (0.0, 1.0)), where),
                    timeout=_timeout(getattr(found, "timeout", None), where),
                    checks=_checks(getattr(found, "checks", RewardChecks()), where))
    if kind in ADAPTERS:  # written for verl, OpenRLHF or verifiers: its adapter calls it as TRL calls a reward
        parts = foreign_parts(ADAPTERS[kind], _picklable(found, source), signature,
                              lambda own: _columns_and_params(own, where))
        return PathRewardSpec(description=_description(found, source) + f" (read as {kind}'s signature)",
                              batched=True, trl_call=True, **read, **parts, **declares)
    parameters = list(signature.parameters.values())
    trl_call, func = kind == "trl", _picklable(found, source)
    if trl_call:  # TRL passes every argument by keyword: any order, and the columns by their names
        parameters = [p for p in parameters if p.name not in TRL_NAMES]
    else:
        positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if not positional or positional[0].name in EXTRAS:
            raise UsageError(f"{where}: its first parameter must be the completion, e.g. score(completion, answer), "
                             f"or it takes TRL's keywords, score(completions, **kwargs)")
        parameters = parameters[1:]
        if not declared and may_be_messages(signature):  # verifiers' too: a failure on the text says so
            func = TextCompletion(func, getattr(found, "__name__", name))
    columns, params = _columns_and_params(parameters, where)
    remaps = column_params(columns, params)
    return PathRewardSpec(description=_description(found, source), func=func, columns=columns, params=params + remaps,
                          remaps=tuple(p.name for p in remaps), batched=trl_call, trl_call=trl_call,
                          completion_shape=hinted_shape(signature), **read, **declares)


def _columns_and_params(parameters: list, where: str) -> tuple[tuple[str, ...], tuple[Param, ...]]:
    columns, params = [], []
    for p in parameters:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in EXTRAS:
            continue
        if p.default is p.empty:
            columns.append(p.name)
            continue
        kind = _param_type(p)
        if kind is not None:  # a default of another type stays the function's own: not settable
            params.append(Param(p.name, p.default, kind, f"keyword parameter of the function (default {p.default!r})"))
    return tuple(columns), tuple(params)


def _param_type(p: inspect.Parameter) -> type | None:
    if p.default is not None:
        return type(p.default) if type(p.default) in _PARAM_TYPES else None
    annotation = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", str(p.annotation))
    for kind in _PARAM_TYPES:  # `int | None`, "Optional[int]", "float"
        if re.search(rf"\b{kind.__name__}\b", annotation or ""):
            return kind
    return str


def _description(func, source: str) -> str:
    doc = inspect.getdoc(func) or ""
    return doc.strip().splitlines()[0] if doc.strip() else f"{source.rpartition(':')[2]} from {source}"


def _bounds(bounds, where: str) -> tuple[float, float]:
    ok = (isinstance(bounds, (tuple, list)) and len(bounds) == 2
          and all(isinstance(b, (int, float)) and not isinstance(b, bool) and math.isfinite(b) for b in bounds)
          and bounds[0] < bounds[1])
    if not ok:
        raise UsageError(f"{where}: its .bounds must be (low, high), two finite numbers with low < high, got {bounds!r}")
    return float(bounds[0]), float(bounds[1])


def _checks(checks, where: str) -> RewardChecks:
    if not isinstance(checks, RewardChecks):
        raise UsageError(f"{where}: its .checks must be a grpo_core.RewardChecks, got {type(checks).__name__}")
    return checks


def _timeout(seconds, where: str) -> float | None:
    if seconds is not None:
        validate_timeout(seconds, f"{where}: its .timeout")
    return seconds


def _dataset_spec(found, name: str, source: str) -> PathDatasetSpec:
    if isinstance(found, DatasetSpec):
        fields = {f.name: getattr(found, f.name) for f in dataclasses.fields(DatasetSpec)}
        fields.update(name=name, distribution=source.rpartition(":")[0])
        return PathDatasetSpec(**fields, source=source)
    where = f"dataset '{name}' ({source})"
    parameters = list(inspect.signature(found).parameters.values())
    columns, params = _columns_and_params(parameters, where)
    if columns:
        raise UsageError(f"{where}: every parameter of a dataset function needs a default (it becomes a "
                         f"--dataset-arg); '{columns[0]}' has none")
    return PathDatasetSpec(name=name, description=_description(found, source), load=_DatasetLoader(found, name),
                           params=params, distribution=source.rpartition(":")[0], source=source)


@dataclass(frozen=True)
class PathEnvironmentSpec(EnvironmentSpec):
    """An environment class loaded from a path; ``source`` selects it again from any folder."""

    source: str = ""


def _environment_spec(found, name: str, source: str) -> PathEnvironmentSpec:
    where = f"environment '{name}' ({source})"
    if isinstance(found, EnvironmentSpec):
        fields = {f.name: getattr(found, f.name) for f in dataclasses.fields(EnvironmentSpec)}
        fields.update(name=name, distribution=source.rpartition(":")[0])
        return PathEnvironmentSpec(**fields, source=source)
    if not isinstance(found, type):
        raise UsageError(f"{where} is a {type(found).__name__}, not a class; name the environment's class, whose "
                         "reset(**row) starts an episode and whose public methods are the tools")
    parameters = list(inspect.signature(found).parameters.values())
    columns, params = _columns_and_params(parameters, where)
    if columns:
        raise UsageError(f"{where}: TRL makes the class with no arguments, so every parameter of its __init__ needs "
                         f"a default (it becomes an --env-arg); '{columns[0]}' has none")
    return PathEnvironmentSpec(name=name, description=_description(found, source), factory=found, params=params,
                               bounds=_bounds(getattr(found, "bounds", (0.0, 1.0)), where),
                               distribution=source.rpartition(":")[0], source=source)


class _DatasetLoader:
    """Calls a dataset function and gives a ``datasets.Dataset`` with a ``prompt`` column, whatever it returned."""

    def __init__(self, function: Callable, name: str) -> None:
        self.function, self.name = function, name
        self.__wrapped__ = function

    def __call__(self, **params):
        import datasets

        rows = self.function(**params)
        if isinstance(rows, (list, tuple)):
            if not rows or not all(isinstance(row, dict) for row in rows):
                raise UsageError(f"dataset '{self.name}' must return a non-empty list of dicts (or a datasets.Dataset)")
            rows = datasets.Dataset.from_list(list(rows))
        if not isinstance(rows, datasets.Dataset):
            raise UsageError(f"dataset '{self.name}' returned a {type(rows).__name__}; return a list of dicts or a "
                             "datasets.Dataset")
        if "prompt" not in rows.column_names:
            raise UsageError(f"dataset '{self.name}' has no 'prompt' column (it has {', '.join(rows.column_names)}); "
                             "give each row a 'prompt'")
        return rows
