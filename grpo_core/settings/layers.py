"""A run's settings from what the user gave: the config-file layer, the flag layer (each flag syntax read here) and
the one order they are stacked in.

A *layer* is a dict holding only what one source sets; :func:`layer` merges layers field by field, later ones
winning. :func:`settings_from_options` stacks them in this order, lowest first:

1. the built-in default run (``default_run.yaml``);
2. the hardware profile, for GRPOConfig fields only, applied when the run is resolved (``trainer.resolve``:
   ``base_grpo`` < the profile's ``grpo_config`` < ``grpo``), because ``auto`` picks a profile by looking at
   the machine;
3. the config file's top level (its ``stages:`` list is read apart, by grpo_core.training.stages);
4. the one stage being run (``stage_layer``);
5. the flags.

Two quirks, as the code does them. For any run but the bare default run, the default run's GRPOConfig fields move
to ``base_grpo`` (so under the profile) less ``save_total_limit`` and ``output_dir``, and its ``compare`` and
``keep_checkpoints`` are dropped. The bare default run (no ``--config``, ``--reward``, ``--dataset`` or
``--model``) keeps its GRPOConfig fields in ``grpo``, above the profile: they are tuned for the CPU ``auto`` picks
there.

The YAML file uses TRL's own GRPOConfig field names (so a ``trl grpo --config`` file keeps working for those), plus
grpo-core's keys (``grpo_core.settings.declared.FILE_KEYS``). Plugin parameters are called ``params`` inside;
``reward_args`` and ``dataset_args`` are only the config keys' and flags' names for them.
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path

import yaml

from grpo_core.errors import UsageError
from grpo_core.settings.bounds import validate_bound
from grpo_core.settings.declared import FILE_SETTINGS, TRL_ALIASES, RunSettings, parse_grpo_fields
from grpo_core.settings.grpo_fields import shown_value
from grpo_core.settings.syntax import parse_cli_schedules, spelled_name

# Merged key by key rather than replaced when a higher layer sets them.
_MAPPINGS = ("dataset_args", "grpo", "base_grpo", "weights", "reward_schedules")


def settings_from_options(config_file=None, no_preflight=False, stage_layer=None, **flags) -> RunSettings:
    """``RunSettings`` from the command's options, the layers stacked in the order this module's docstring gives."""
    if no_preflight:
        flags["preflight"] = False
    top = flag_layer(**flags)
    default_path = default_config_file()
    default = file_layer(read_config_file(default_path), default_path)
    if config_file is None and not {"rewards", "dataset", "model"} & set(top):
        return RunSettings(**layer(default, top))
    # 200 questions and removing checkpoints suit the default run; another run compares when asked (--compare)
    # and keeps TRL's checkpoints
    for key in ("compare", "keep_checkpoints"):
        default.pop(key, None)
    default["base_grpo"] = default.pop("grpo", {})
    default["base_grpo"].pop("save_total_limit", None)
    default["base_grpo"].pop("output_dir", None)  # another run must not write into the default run's folder
    layers = [default]
    if config_file is not None:
        data = read_config_file(config_file)
        data.pop("stages", None)  # read by grpo_core.training.stages, which passes each stage as stage_layer
        layers.append(file_layer(data, config_file))
    if stage_layer is not None:
        layers.append(stage_layer)
    return RunSettings(**layer(*layers, top))


def layer(*layers: dict) -> dict:
    """Settings layers (lowest first) merged field by field into one; each layer holds only what it sets.

    A layer's ``dataset`` replaces the dataset and drops lower layers' ``dataset_args``; its ``rewards``
    replace the rewards and keep lower layers' ``reward_args`` and ``reward_schedules`` only for rewards still
    selected; ``reward_args`` (per reward, then per parameter), ``reward_schedules``, ``dataset_args`` and
    ``grpo`` merge key by key.
    """
    result: dict = {}
    for top in layers:
        if "dataset" in top and top["dataset"] != result.get("dataset"):
            result.pop("dataset_args", None)
        if "rewards" in top:
            result["weights"] = {}
            kept = {*top["rewards"], *map(spelled_name, top["rewards"])}
            result["reward_args"] = {k: v for k, v in result.get("reward_args", {}).items() if k in kept}
            result["reward_schedules"] = {k: v for k, v in result.get("reward_schedules", {}).items() if k in kept}
        for key, value in top.items():
            if key == "reward_args":
                params = {name: dict(values) for name, values in result.get(key, {}).items()}
                for name, values in value.items():
                    params.setdefault(name, {}).update(values)
                result[key] = params
            elif key in _MAPPINGS:
                result[key] = {**result.get(key, {}), **value}
            else:
                result[key] = value
    return result


def flag_layer(rewards=(), reward_args=(), reward_schedules=(), dataset_args=(), overrides=(), max_steps=None,
               output_dir=None, dry_run=None, num_processes=None, stop_on=(), environments=(), env_args=(),
               **values) -> dict:
    """The command-line flags as a settings layer: only what was given, each repeatable flag read with its syntax.

    ``--reward NAME[=WEIGHT]``, ``--reward-arg NAME.KEY=VALUE`` (a reward's params), ``--reward-weight
    NAME=SCHEDULE``, ``--dataset-arg KEY=VALUE`` and ``--set FIELD=VALUE``; ``--max-steps`` and ``--output-dir``
    join ``--set``. Names are checked against the registry later (``load_rewards``); here only the syntax is.
    """
    result = {key: value for key, value in values.items() if value is not None}
    names, weights = [], {}
    for item in rewards or ():
        name, weight = split_weight(item)
        if not name:
            raise UsageError(f"--reward '{item}' has no name; write --reward NAME or --reward NAME=WEIGHT")
        if name in names:
            raise UsageError(f"reward '{name}' is selected twice; give it once, with its weight: --reward {name}=W")
        names.append(name)
        if weight is not None:
            weights[name] = parse_weight(weight, name)
    if names:
        result.update(rewards=names, weights=weights)
    for key, items, flag in (("reward_args", reward_args, "--reward-arg"), ("env_args", env_args, "--env-arg")):
        params = parse_named_args(items, flag)
        if params:
            result[key] = params
    envs = [item.strip() for item in environments or ()]
    if any(not name for name in envs):
        raise UsageError("--env '' has no name; write --env NAME, or --env FILE.py:CLASS")
    if envs:
        result["environments"] = list(dict.fromkeys(envs))
    if reward_schedules:
        result["reward_schedules"] = parse_cli_schedules(reward_schedules)
    if dataset_args:
        result["dataset_args"] = parse_key_values(dataset_args, "--dataset-arg")
    if stop_on:
        result["stop_on"] = list(dict.fromkeys(stop_on))
    grpo = {key: text.strip() for key, text in parse_key_values(overrides, "--set").items()}
    grpo.update({k: v for k, v in (("max_steps", max_steps), ("output_dir", output_dir)) if v is not None})
    if grpo:
        result["grpo"] = parse_grpo_fields(grpo, "--set")
    return result


def parse_named_args(items, flag: str) -> dict[str, dict]:
    """``NAME.KEY=VALUE`` items (``--reward-arg``, ``--env-arg``) -> {name: {key: value}}."""
    params: dict[str, dict] = {}
    for item in items or ():
        left, sep, value = item.partition("=")
        # a path's name holds dots (./brevity.py:score.max_words): its key is after the last one
        name, dot, key = (part.strip() for part in (left.rpartition(".") if ":" in left else left.partition(".")))
        if not sep or not dot or not name or not key:
            raise UsageError(f"{flag} '{item}' is not of the form NAME.KEY=VALUE")
        params.setdefault(name, {})[key] = value
    return params


def parse_reward_options(rewards, reward_args) -> tuple[list[str], dict[str, float], dict[str, dict]]:
    """``--reward math=2.0 --reward-arg length.target=300`` -> (names, weights, params), as ``train`` reads them."""
    given = flag_layer(rewards=rewards, reward_args=reward_args)
    return given.get("rewards", []), given.get("weights", {}), given.get("reward_args", {})


def split_weight(item: str) -> tuple[str, str | None]:
    """``NAME[=WEIGHT]`` -> (name, weight text or None). The weight follows the last ``=``, and only where it could be
    a number: a path such as ``./lr=0.1/my.py:score`` keeps its ``=``."""
    name, sep, weight = item.rpartition("=")
    if not sep or any(mark in weight for mark in ":/\\"):
        return item.strip(), None
    return name.strip(), weight.strip()


def parse_weight(text: str, name: str) -> float:
    try:
        weight = float(text)
    except ValueError:
        raise UsageError(f"weight '{text}' for reward '{name}' is not a number; write --reward {name}=1.5") from None
    if not math.isfinite(weight) or weight < 0:
        raise UsageError(f"weight {text} for reward '{name}' must be a finite number >= 0")
    return weight


def parse_key_values(items, option: str) -> dict[str, str]:
    """``KEY=VALUE`` items (``--dataset-arg``, ``--set``) -> dict."""
    result = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{option} '{item}' is not of the form KEY=VALUE")
        result[key.strip()] = value
    return result


def default_config_file() -> str:
    """The packaged config of the run ``grpo-run`` does with no arguments."""
    return str(resources.files("grpo_core.settings").joinpath("default_run.yaml"))


def read_config_file(path: str) -> dict:
    """The YAML mapping in ``path``, or a UsageError saying what is wrong and where."""
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
    for setting in FILE_SETTINGS:
        if setting.name == "rewards" or setting.name not in data:
            continue
        value = data.pop(setting.name)
        if value is None:
            continue
        if not _is_kind(value, setting.type):
            if setting.type is dict:
                raise UsageError(f"config file '{path}': '{setting.name}' must be a mapping, got {value!r}")
            raise UsageError(f"config file '{path}': '{setting.name}' expects {setting.type.__name__}, got {shown_value(value)}")
        problem = validate_bound(setting.name, value)
        if problem:
            raise UsageError(f"config file '{path}': {problem}")
        result[setting.name] = value
    for key in ("reward_args", "env_args"):
        for name, values in result.get(key, {}).items():
            if not isinstance(values, dict):
                raise UsageError(f"config file '{path}': {key} of '{name}' must be a mapping of parameter to "
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
        if weight is None:
            name, weight = split_weight(name)
        names.append(name.strip())
        if weight is not None:
            weights[name.strip()] = parse_weight(str(weight), name.strip())
    return names, weights

