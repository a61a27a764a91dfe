"""Config files: reading one, and turning its mapping into a settings layer (see grpo_core.settings.declared).

The YAML file uses TRL's own GRPOConfig field names (so a ``trl grpo --config`` file keeps
working for those), plus grpo-core's keys (``grpo_core.settings.declared.FILE_KEYS``).
"""

from __future__ import annotations

from pathlib import Path

from grpo_core.settings.bounds import check_bound
from grpo_core.errors import UsageError
from grpo_core.settings.flags import parse_weight
from grpo_core.settings.declared import (  # noqa: F401  (RunSettings: imported from here by callers)
    FILE_KEYS,
    RUN_SETTINGS,
    TRL_ALIASES,
    RunSettings,
    _shown,
    parse_grpo_fields,
)

RUN_KEYS = FILE_KEYS
check_grpo_fields = parse_grpo_fields  # the name profile plugins' generated tests use


def default_config_file() -> str:
    """The packaged config of the run ``grpo-run`` does with no arguments."""
    from importlib import resources

    return str(resources.files("grpo_core.settings").joinpath("default_run.yaml"))


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


def file_layer(data: dict, path: str) -> dict:
    """A config file's mapping as a settings layer: only the keys it sets, each checked against its declared type."""
    data = {TRL_ALIASES.get(key, key): value for key, value in data.items()}
    result: dict = {}
    rewards = data.pop("rewards", None)
    if rewards is not None:
        result["rewards"], result["weights"] = _rewards_from_file(rewards, path)
    for setting in RUN_SETTINGS:
        if setting.name == "rewards" or setting.name not in data:
            continue
        value = data.pop(setting.name)
        if value is None:
            continue
        if not _is_kind(value, setting.type):
            if setting.type is dict:
                raise UsageError(f"config file '{path}': '{setting.name}' must be a mapping, got {value!r}")
            raise UsageError(f"config file '{path}': '{setting.name}' expects {setting.type.__name__}, got {_shown(value)}")
        problem = check_bound(setting.name, value)
        if problem:
            raise UsageError(f"config file '{path}': {problem}")
        result[setting.name] = value
    for name, values in result.get("reward_args", {}).items():
        if not isinstance(values, dict):
            raise UsageError(f"config file '{path}': reward_args of '{name}' must be a mapping of parameter to "
                             f"value, like {{target: 300}}, got {values!r}")
    grpo = parse_grpo_fields(data, f"config file '{path}'")
    if grpo:
        result["grpo"] = grpo
    return result


def _is_kind(value, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is str:
        return isinstance(value, str) and value.strip() != ""
    return isinstance(value, kind)


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
