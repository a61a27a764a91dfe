"""What plugins register: the reward, dataset, environment, model and profile specs, and the parameters datasets
share."""

from __future__ import annotations

import importlib
import inspect
import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from grpo_core.errors import PluginError, UsageError
from grpo_core.rewards.declared import RewardChecks
from grpo_core.settings.params import Param, resolve_params


class LazyCallable:
    """A ``"module:function"`` string standing for that function, imported on first call or inspection.

    It pickles as the string, so a worker process imports the function itself; ``inspect.signature`` sees
    the function's own parameters through ``__wrapped__``.
    """

    def __init__(self, target: str, owner: str) -> None:
        module, _, name = target.partition(":")
        if not module or not name or ":" in name or not all(part.isidentifier() for part in (*module.split("."), *name.split("."))):
            raise PluginError(f"{owner}: '{target}' is not a 'module:function' string; write e.g. "
                              f"'my_plugin.reward:score'")
        self.target, self.owner = target, owner
        self._function: Callable | None = None

    @property
    def __wrapped__(self) -> Callable:
        if self._function is None:
            module, _, name = self.target.partition(":")
            try:
                found: Any = importlib.import_module(module)
                for part in name.split("."):
                    found = getattr(found, part)
            except ImportError as error:
                raise PluginError(f"{self.owner}: cannot import '{self.target}': {error}; fix the module name") from None
            except AttributeError:
                raise PluginError(f"{self.owner}: cannot import '{self.target}': module '{module}' has no '{name}'; "
                                  f"fix the function name") from None
            if not callable(found):
                raise PluginError(f"{self.owner}: '{self.target}' is a {type(found).__name__}, not a function")
            self._function = found
        return self._function

    def __call__(self, *args, **kwargs):
        return self.__wrapped__(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # __name__, __qualname__, __doc__ of the function itself
        if name.startswith("_") and name not in ("__name__", "__qualname__", "__doc__", "__defaults__"):
            raise AttributeError(name)
        return getattr(self.__wrapped__, name)

    def __reduce__(self):
        return LazyCallable, (self.target, self.owner)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyCallable) and other.target == self.target

    def __hash__(self) -> int:
        return hash(self.target)

    def __repr__(self) -> str:
        return f"<lazy {self.target}>"


def _lazy(spec: Any, *fields: str) -> None:
    """Replace each of ``fields`` given as a ``"module:function"`` string by a LazyCallable."""
    kind = type(spec).__name__.removesuffix("Spec").lower()
    for name in fields:
        value = getattr(spec, name)
        if isinstance(value, str):
            object.__setattr__(spec, name, LazyCallable(value, f"{kind} '{spec.name}' ({name})"))


def _import_now(spec: Any, *fields: str) -> None:
    """Import every lazy function of ``spec`` now, so a wrong string fails when the spec is first used."""
    for name in fields:
        value = getattr(spec, name)
        if isinstance(value, LazyCallable):
            value.__wrapped__


def validate_timeout(seconds: Any, where: str) -> None:
    """Raise a UsageError unless ``seconds`` is a positive, finite number (nan never fires, inf overflows)."""
    ok = isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and math.isfinite(seconds) and seconds > 0
    if not ok:
        raise UsageError(f"{where}: a timeout must be a positive, finite number of seconds, got {seconds!r}")


TIMEOUT_HELP = ("hard limit in seconds for scoring one completion; a completion past it counts as a timeout "
                "(its score: None, or what the reward gives for one)")


@dataclass(frozen=True)
class RewardSpec:
    """What a reward plugin registers.

    ``func`` scores one completion: ``func(completion, **columns, **params) -> float | None``,
    where ``completion`` is the completion's text (parameters the function does not take,
    such as ``answer_column``, are not passed unless it takes ``**kwargs``). Declare ``completion_ids`` or ``prompt`` as
    keyword parameters of ``func`` to receive them too. With ``batched=True`` it scores a batch:
    ``func(completions, **columns, **params) -> list[float | None]`` with lists for columns.
    ``func``, ``validate`` and ``observe`` may be ``"module:function"`` strings, imported on first use, so
    the module that registers the spec stays cheap to import.

    A column ``c`` is read from the dataset column named by the parameter ``c_column`` when the
    reward has one (so users can remap it), else from the column ``c``. ``columns`` may be a
    callable ``params -> tuple`` when which columns are needed depends on the parameters.
    ``optional_columns`` (a tuple or such a callable) are read when the dataset has them: a dataset
    without one is not an error and the function's own default applies; an empty cell arrives as None.

    ``timeout=T`` runs each item under a hard limit of T seconds and gives the reward a ``timeout``
    parameter with default T (declare ``Param("timeout", T, float, help)`` yourself only for your own help
    text); its value is checked to be a positive, finite number of seconds.

    ``bounds_for(params) -> (low, high)``, when given, gives the bounds of a bound reward whose range depends on its
    parameters (a reward model's raw logit between bounds the user sets); ``bounds`` is then what listings show.

    What only the property checks read is grouped in ``checks``, a ``RewardChecks``.
    """

    name: str
    description: str
    func: Callable | str
    bounds: tuple[float, float] = (0.0, 1.0)
    columns: tuple[str, ...] | Callable[[dict], tuple[str, ...]] = ()
    params: tuple[Param, ...] = ()
    optional_columns: tuple[str, ...] | Callable[[dict], tuple[str, ...]] = ()
    weight: float = 1.0
    batched: bool = False
    group_relative: bool = False  # the score of one completion depends on the others in its batch
    timeout: float | None = None  # hard per-item limit in seconds, enforced in a worker process; the
    # ``timeout`` parameter it creates overrides it for a bound reward
    validate: Callable[[dict], None] | str | None = None  # params -> raise ValueError on bad values, at load time
    # (columns, scores, params) -> None: sees each batch's scores in the training process, after scoring
    # (a curriculum follows its rolling accuracy this way, since scores may come from worker processes).
    observe: Callable[[dict, list, dict], None] | str | None = None
    checks: RewardChecks = RewardChecks()  # what only the property checks read (directions, gold example, ...)
    bounds_for: Callable[[dict], tuple[float, float]] | None = None  # params -> the bound reward's bounds
    distribution: str = field(default="", compare=False)  # filled in by the plugin manager

    def __post_init__(self) -> None:
        _lazy(self, "func", "validate", "observe")
        if self.timeout is not None:
            object.__setattr__(self, "params", _with_timeout(self.params, self.timeout, self.name))

    def resolve(self, params: dict | None = None) -> dict:
        """Parameters at their defaults overlaid with ``params``, parsed and validated."""
        _import_now(self, "func", "validate", "observe")
        resolved = resolve_params(self.params, params, f"reward '{self.name}'")
        if self.timeout is not None:
            validate_timeout(self.timeout, f"reward '{self.name}' declares RewardSpec(timeout=...)")
            if resolved.get("timeout") is not None:
                validate_timeout(resolved["timeout"], f"reward '{self.name}': parameter 'timeout'")
        if self.validate is not None:
            try:
                self.validate(resolved)
            except (ValueError, TypeError, OSError) as error:
                raise UsageError(f"reward '{self.name}': {error}") from None
        return resolved

    def required_columns(self, params: dict) -> dict[str, str]:
        """Map each column the reward needs to the dataset column it comes from."""
        names = self.columns(params) if callable(self.columns) else self.columns
        return {name: params.get(f"{name}_column") or name for name in names}

    def optional_column_sources(self, params: dict) -> dict[str, str]:
        """Map each column the reward reads when the dataset has it to the dataset column it comes from."""
        names = self.optional_columns(params) if callable(self.optional_columns) else self.optional_columns
        return {name: params.get(f"{name}_column") or name for name in names}


def _with_timeout(params: tuple[Param, ...], seconds: Any, reward: str) -> tuple[Param, ...]:
    """``params`` with the ``timeout`` parameter that ``RewardSpec(timeout=seconds)`` creates."""
    declared = [p for p in params if p.name == "timeout"]
    if not declared:
        return (*params, Param("timeout", seconds, float, TIMEOUT_HELP))
    if declared[0].help == TIMEOUT_HELP:  # the one created before (dataclasses.replace): follow the new value
        return tuple(replace(p, default=seconds) if p.name == "timeout" else p for p in params)
    return params  # the plugin's own parameter, as declared: its default overrides ``timeout=`` (as it always did)


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset by name.

    ``load(**params)`` returns a ``datasets.Dataset`` with a ``prompt`` column (a string or
    chat messages) plus the columns in ``columns``. Import ``datasets`` inside ``load``, or give ``load``
    (and ``callbacks``) as a ``"module:function"`` string, imported on first use.
    ``reward_params`` maps a reward name to parameter values this dataset asks of it, e.g.
    ``{"math": {"allow_expressions": False}}`` for a dataset that teaches evaluation: they apply when
    that reward is in the run, under the user's own ``--reward-arg``/``reward_args`` (the user wins),
    and a name the reward does not have is a PluginError naming the dataset.
    """

    name: str
    description: str
    load: Callable[..., Any] | str
    columns: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    # (dataset, params) -> [transformers.TrainerCallback, ...] added to the trainer (a curriculum that
    # logs its level and stores it in checkpoints); called only when training.
    callbacks: Callable[[Any, dict], list] | str | None = None
    reward_params: dict[str, dict] = field(default_factory=dict, hash=False)
    distribution: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _lazy(self, "load", "callbacks")
        if not isinstance(self.reward_params, dict) or not all(
            isinstance(k, str) and isinstance(v, dict) for k, v in self.reward_params.items()
        ):
            raise TypeError(f"dataset '{self.name}': reward_params must map reward names to parameter dicts, "
                            f"e.g. {{'math': {{'allow_expressions': False}}}}; got {self.reward_params!r}")

    def resolve(self, params: dict | None = None) -> dict:
        """Parameters at their defaults overlaid with ``params``, parsed and validated."""
        _import_now(self, "load", "callbacks")
        return resolve_params(self.params, params, f"dataset '{self.name}'")


@dataclass(frozen=True)
class EnvironmentSpec:
    """An environment: what TRL's ``GRPOTrainer(environment_factory=...)`` takes, and what grpo-core reads of it.

    ``factory`` is a plain TRL environment class (or a ``"module:Class"`` string, imported on first use): its
    ``reset(**row)`` starts an episode from a dataset row (text it returns is added to the user's message), each
    public method with type hints and a Google-style docstring is a tool the model may call, and ``get_reward()``
    (optional) scores the episode. ``params`` are given to the class as keyword arguments (``--env-arg
    NAME.KEY=VALUE``); ``columns`` are the dataset columns ``reset`` reads; ``bounds`` are those of ``get_reward``.
    ``gold_episode`` (optional; a function or a ``"module:function"`` string) takes a dataset row and gives the tool
    calls a right episode makes, as ``[(tool name, {argument: value}), ...]``: ``grpo-run check --env`` checks that
    it earns the high bound, and that no other call gets the row's answer out of a tool. A function of two
    positional parameters, ``gold_episode(row, params)``, also gets the environment's resolved parameters, for an
    environment whose right episode depends on them (which reward ``retry`` wraps); ``gold_calls`` calls either form.
    """

    name: str
    description: str
    factory: type | str
    params: tuple[Param, ...] = ()
    columns: tuple[str, ...] = ()
    bounds: tuple[float, float] = (0.0, 1.0)
    gold_episode: Callable[..., list[tuple[str, dict]]] | str | None = None
    distribution: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _lazy(self, "factory", "gold_episode")

    def gold_calls(self, row: dict, params: dict) -> list:
        """What the declared gold episode gives for ``row``: ``gold_episode(row, params)`` when the function takes two
        positional parameters (or ``*args``), else ``gold_episode(row)``; ``params`` are the environment's resolved
        parameters."""
        if self.gold_episode is None:
            raise PluginError(f"environment '{self.name}' declares no gold_episode")
        if _positional_count(self.gold_episode) >= 2:
            return self.gold_episode(row, params)
        return self.gold_episode(row)

    @property
    def environment_class(self) -> type:
        """The class itself (a lazy ``"module:Class"`` imported now)."""
        found = self.factory.__wrapped__ if isinstance(self.factory, LazyCallable) else self.factory
        if not isinstance(found, type):
            raise PluginError(f"environment '{self.name}': its factory is a {type(found).__name__}, not a class; "
                              "register the environment's class")
        return found

    def tool_names(self) -> list[str]:
        """The tools the class offers, as TRL lists them: its public methods, but ``reset`` and ``get_reward``."""
        import inspect

        return [name for name, _ in inspect.getmembers(self.environment_class, predicate=inspect.isfunction)
                if not name.startswith("_") and name not in ("reset", "get_reward")]

    def resolve(self, params: dict | None = None) -> dict:
        """Parameters at their defaults overlaid with ``params``, parsed and validated."""
        _import_now(self, "factory", "gold_episode")
        return resolve_params(self.params, params, f"environment '{self.name}'")


def _positional_count(function: Callable) -> int:
    """How many positional parameters ``function`` declares (``*args``: as many as given); 1 when it cannot be told."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return 1
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return 2
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters) or 1


# The parameters most datasets take, declared once: name -> (default, type, help).
_DATASET_PARAMS: dict[str, tuple[Any, type, str]] = {
    "split": ("train", str, "which split to read; a generated dataset gives different rows to train and test"),
    "size": (None, int, "number of rows; a loaded dataset keeps its first N (after shuffling)"),
    "seed": (0, int, "seed of the generator or the shuffle: the same seed gives the same rows"),
    "shuffle": (False, bool, "shuffle the rows"),
    "system_prompt": (None, str, "system message put before each prompt (empty: none)"),
}
DATASET_PARAM_NAMES = tuple(_DATASET_PARAMS)


def dataset_param(name: str, default: Any = ..., **changes: Any) -> Param:
    """One of the parameters datasets share (``split``, ``size``, ``seed``, ``shuffle``, ``system_prompt``).

    Its type and help are declared here once; give the dataset's own ``default`` and, as keywords, any other
    ``Param`` field it changes (``choices``, ``minimum``, ``maximum``, or ``help`` where the dataset reads the
    parameter its own way), e.g. ``dataset_param("size", 1000, minimum=1, maximum=100_000)``.
    """
    if name not in _DATASET_PARAMS:
        raise PluginError(f"'{name}' is not a shared dataset parameter; choose one of {', '.join(_DATASET_PARAMS)} "
                          f"or declare Param('{name}', ...) yourself")
    shared_default, kind, help_text = _DATASET_PARAMS[name]
    help_text = changes.pop("help", help_text)
    return Param(name, shared_default if default is ... else default, kind, help_text, **changes)


@dataclass(frozen=True)
class ModelSpec:
    """A model alias: ``resolve()`` returns a local path or hub id for ``from_pretrained``.

    ``available()`` says, without loading anything, whether it resolves offline right now.
    """

    name: str
    description: str
    resolve: Callable[[], str]
    available: Callable[[], bool] = lambda: True
    distribution: str = field(default="", compare=False)


@dataclass(frozen=True)
class ProfileSpec:
    """A hardware profile as data: GRPOConfig fields, model-loading arguments, a LoRA config and a launcher.

    ``grpo_config`` holds GRPOConfig field values; ``model_kwargs`` go to ``from_pretrained``
    (``dtype`` as a string such as "bfloat16"); ``lora`` holds ``peft.LoraConfig`` fields or
    None; ``launcher`` holds ``accelerate launch`` options or None for a single process.
    ``pick()``, for profiles such as ``auto``, returns ``(profile name, reason)`` to use instead.
    """

    name: str
    description: str
    grpo_config: dict = field(default_factory=dict)
    model_kwargs: dict = field(default_factory=dict)
    lora: dict | None = None
    launcher: dict | None = None
    pick: Callable[[], tuple[str, str]] | None = None
    distribution: str = field(default="", compare=False)
