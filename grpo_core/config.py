"""A run's settings: profile defaults, then the YAML config file, then command-line flags.

The YAML file uses TRL's own GRPOConfig field names (so a ``trl grpo --config`` file keeps
working for those), plus grpo-core's keys below.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

from grpo_core.errors import UsageError
from grpo_core.options import parse_weight
from grpo_core.params import did_you_mean

# Keys of the config file that are grpo-core's rather than GRPOConfig fields.
RUN_KEYS = ("rewards", "reward_args", "dataset", "dataset_args", "model", "profile", "preflight", "resume", "merge_lora",
            "compare")
# Keys that trl's own CLI scripts use for the same things.
TRL_ALIASES = {"model_name_or_path": "model"}


@dataclass
class RunSettings:
    """Everything a training run needs, before anything heavy is loaded."""

    rewards: list[str] = field(default_factory=list)
    weights: dict[str, float] = field(default_factory=dict)
    reward_args: dict[str, dict] = field(default_factory=dict)
    dataset: str | None = None
    dataset_args: dict = field(default_factory=dict)
    model: str | None = None
    profile: str = "auto"
    preflight: bool = True
    resume: bool = False
    merge_lora: bool = False
    overwrite: bool = False  # replace the outputs of an earlier run in the output folder
    compare: int = 0  # after training, score base and trained model on this many held-out prompts
    grpo: dict = field(default_factory=dict)  # GRPOConfig field overrides (file, then flags)


def default_config_file() -> str:
    """The packaged config of the run ``grpo-run`` does with no arguments."""
    from importlib import resources

    return str(resources.files("grpo_core").joinpath("default_run.yaml"))


def read_config_file(path: str) -> dict:
    """The YAML mapping in ``path``, or a UsageError saying what is wrong and where."""
    import yaml

    file = Path(path)
    if not file.is_file():
        raise UsageError(f"config file '{path}' does not exist")
    try:
        data = yaml.safe_load(file.read_text())
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise UsageError(f"config file '{path}' is not valid YAML{where}: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"config file '{path}' must hold a mapping of keys to values, not {type(data).__name__}")
    return data


def apply_config_file(settings: RunSettings, data: dict, path: str) -> None:
    """Fill ``settings`` from a config file's mapping (command-line flags are applied after)."""
    data = {TRL_ALIASES.get(key, key): value for key, value in data.items()}
    rewards = data.pop("rewards", None)
    if rewards is not None:
        settings.rewards, settings.weights = _rewards_from_file(rewards, path)
    for key in ("reward_args", "dataset_args"):
        value = data.pop(key, None)
        if value is not None:
            if not isinstance(value, dict):
                raise UsageError(f"config file '{path}': '{key}' must be a mapping, got {value!r}")
            setattr(settings, key, value)
    if isinstance(settings.reward_args, dict):
        for name, values in settings.reward_args.items():
            if not isinstance(values, dict):
                raise UsageError(f"config file '{path}': reward_args of '{name}' must be a mapping of parameter to "
                                 f"value, like {{target: 300}}, got {values!r}")
    for key, kind in RUN_KEY_TYPES.items():
        if key in data:
            value = data.pop(key)
            if value is not None and not _is_kind(value, kind):
                raise UsageError(f"config file '{path}': '{key}' expects {kind.__name__}, got {_shown(value)}")
            if value is not None:
                setattr(settings, key, value)
    settings.grpo.update(check_grpo_fields(data, f"config file '{path}'"))


# grpo-core's scalar keys in a config file, with the type each takes.
RUN_KEY_TYPES = {"dataset": str, "model": str, "profile": str, "preflight": bool, "resume": bool, "merge_lora": bool,
                 "compare": int}


def _is_kind(value, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is str:
        return isinstance(value, str) and value.strip() != ""
    return isinstance(value, kind)


def _shown(value) -> str:
    kind = {list: "a list", dict: "a mapping", bool: "a true/false value"}.get(type(value), type(value).__name__)
    text = repr(value)
    return f"{kind} {text if len(text) <= 40 else text[:37] + '...'}"


def _rewards_from_file(rewards, path: str) -> tuple[list[str], dict[str, float]]:
    names, weights = [], {}
    items = rewards.items() if isinstance(rewards, dict) else [(r, None) for r in rewards] if isinstance(rewards, list) else None
    if items is None:
        raise UsageError(f"config file '{path}': 'rewards' must be a list like [math, length=0.5] or a mapping of name to weight")
    for name, weight in items:
        name = str(name)
        if weight is None and "=" in name:
            name, _, weight = name.partition("=")
        names.append(name.strip())
        if weight is not None:
            weights[name.strip()] = parse_weight(str(weight), name.strip())
    return names, weights


def grpo_config_fields() -> dict:
    from trl import GRPOConfig

    return {f.name: f for f in dataclasses.fields(GRPOConfig) if f.init}


def check_grpo_fields(values: dict, source: str) -> dict:
    """``values`` with each value coerced to its GRPOConfig field's type; unknown fields are an error."""
    fields = grpo_config_fields()
    result = {}
    for key, value in values.items():
        if key not in fields:
            raise UsageError(
                f"{source}: '{key}' is not a GRPOConfig field{did_you_mean(key, fields)}; see the fields of "
                f"trl.GRPOConfig, or grpo-core's keys: {', '.join(RUN_KEYS)}"
            )
        result[key] = coerce(fields[key], value, source)
    return result


def coerce(field_: dataclasses.Field, value, source: str):
    """Turn command-line strings (and YAML's '1e-5', which YAML reads as text) into the field's type."""
    kinds = _type_options(field_.type)
    if isinstance(value, bool) and bool not in kinds and str in kinds:
        # YAML 1.1 reads `save_strategy: no` as False; such fields take the word.
        return "yes" if value else "no"
    if not isinstance(value, str):
        if not _fits(value, kinds):
            wanted = " or ".join(sorted(k.__name__ for k in kinds if k in _PLAIN and k is not type(None)))
            raise UsageError(f"{source}: '{field_.name}' expects {wanted}, got {_shown(value)}")
        return value
    for kind, convert in ((bool, _to_bool), (int, int), (float, float)):
        if kind in kinds and str not in kinds:
            try:
                return convert(value)
            except ValueError:
                if kind is int and float in kinds:
                    continue
                raise UsageError(
                    f"{source}: '{field_.name}' expects {kind.__name__}, got {value!r}"
                ) from None
    if list in kinds or dict in kinds:
        import yaml

        parsed = yaml.safe_load(value)
        if isinstance(parsed, (list, dict)):
            return parsed
    return value


_PLAIN = {bool, int, float, str, list, dict, type(None)}


def _fits(value, kinds: set) -> bool:
    """Whether a YAML value (not text) can be a field of these types; unknown types are not checked."""
    if value is None or not kinds or not kinds <= _PLAIN:
        return True
    if isinstance(value, bool):
        return bool in kinds
    if isinstance(value, int):
        return bool(kinds & {int, float, str})
    if isinstance(value, float):
        return float in kinds or str in kinds or (int in kinds and value.is_integer())
    if isinstance(value, list):
        return list in kinds
    if isinstance(value, dict):
        return dict in kinds
    return True


def _type_options(annotation) -> set:
    if isinstance(annotation, str):
        return {t for name, t in (("bool", bool), ("int", int), ("float", float), ("str", str), ("list", list), ("dict", dict)) if name in annotation}
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_type_options(arg) for arg in typing.get_args(annotation)))
    if origin is not None:
        return {origin}
    return {annotation}


def _to_bool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ValueError(value)


def parse_set_values(items: dict[str, str]) -> dict:
    """``--set FIELD=VALUE``: the text as given; ``coerce`` turns it into the field's type."""
    return {key: text.strip() for key, text in items.items()}
