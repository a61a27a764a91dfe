"""A run's settings, each declared once: the ``train`` options, the config-file keys, ``RunSettings``,
``--dry-run``'s settings block and the docs table are all made from ``SETTINGS``.

GRPOConfig fields are not declared here: they are TRL's, read with TRL's own field types
(grpo_core.settings.grpo_fields). The bound of every number, flag or not, is in grpo_core.settings.bounds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import click

from grpo_core.settings.bounds import check_bound
from grpo_core.errors import UsageError
from grpo_core.settings.grpo_fields import _parse_field, _shown, field_table, grpo_defaults  # noqa: F401  (imported from here)
from grpo_core.settings.params import did_you_mean


@dataclass(frozen=True)
class Setting:
    """One setting of a run.

    ``kind``: ``run`` (a RunSettings field, a config-file key and, with ``flag``, a ``train`` option),
    ``grpo`` (a ``train`` option for one GRPOConfig field), ``command`` (a ``train`` option only).
    """

    name: str
    type: Any  # str, int, bool, list or dict
    default: Any
    help: str
    flag: str | None = None  # the option's spelling; None: config file only
    metavar: str | None = None
    kind: str = "run"
    multiple: bool = False


SETTINGS: tuple[Setting, ...] = (
    Setting("rewards", list, [], "Rewards to train with, each NAME or NAME=WEIGHT; repeat the flag for several.",
            "--reward", "NAME[=WEIGHT]", multiple=True),
    Setting("reward_args", dict, {}, "Reward parameters, e.g. length.target=300 (file: {length: {target: 300}}).",
            "--reward-arg", "NAME.KEY=VALUE", multiple=True),
    Setting("reward_schedules", dict, {}, "A reward weight that changes during training: linear, cosine, steps or "
            "adaptive, e.g. math=adaptive or xml-format=linear:start=1,end=0.2 (file: {math: {kind: adaptive}}).",
            "--reward-weight", "NAME=SCHEDULE", multiple=True),
    Setting("dataset", str, None, "Dataset name (see `grpo-run datasets`).", "--dataset"),
    Setting("dataset_args", dict, {}, "Dataset parameters, e.g. path=data.jsonl.", "--dataset-arg", "KEY=VALUE",
            multiple=True),
    Setting("model", str, None, "Model alias (see `grpo-run models`), local folder or hub id.", "--model"),
    Setting("profile", str, "auto", "Hardware profile (see `grpo-run profiles`).", "--profile"),
    Setting("preflight", bool, True, "Run the quick property checks of the rewards before training.",
            "--preflight/--no-preflight"),
    Setting("resume", bool, False, "Continue the run in the output folder from its last checkpoint (checked to be "
            "the same run).", "--resume"),
    Setting("overwrite", bool, False, "Replace the outputs of an earlier run in the output folder (only what a run "
            "writes there).", "--overwrite", kind="command"),
    Setting("merge_lora", bool, False, "With a LoRA profile, also write the merged model to OUTPUT_DIR/merged.",
            "--merge-lora"),
    Setting("keep_checkpoints", bool, True, "Keep the checkpoints once the run has finished and saved final/ (false: "
            "remove them; each holds the optimizer state, about twice the model's size, needed only to resume).", None),
    Setting("compare", int, 0, "After training, score the base and the trained model on this many held-out prompts "
            "(0: no comparison; only the default run, grpo-run with no arguments, compares on 200).", "--compare", "N"),
    Setting("config_file", str, None, "YAML file of GRPOConfig fields plus the keys of this table.", "--config",
            "FILE", kind="command"),
    Setting("stage", str, None, "Run only this stage of a config file's `stages:` (in its folder under the output "
            "folder).", "--stage", "NAME", kind="command"),
    Setting("max_steps", int, None, "Number of training steps (GRPOConfig.max_steps).", "--max-steps", kind="grpo"),
    Setting("output_dir", str, None, "Where checkpoints, metrics and the final model go (GRPOConfig.output_dir).",
            "--output-dir", kind="grpo"),
    Setting("overrides", list, [], "Set any GRPOConfig field, e.g. learning_rate=1e-5.", "--set", "FIELD=VALUE",
            kind="command", multiple=True),
    Setting("num_processes", int, None, "Train in N processes through `accelerate launch`.", "--num-processes", "N",
            kind="command"),
    Setting("dry_run", bool, False, "Print the resolved run as JSON and exit; loads no model or dataset, runs no "
            "checks, uses no network.", "--dry-run", kind="command"),
)

RUN_SETTINGS = tuple(s for s in SETTINGS if s.kind == "run")
# Keys of a config file that are grpo-core's rather than GRPOConfig fields.
FILE_KEYS = tuple(s.name for s in RUN_SETTINGS)
# Keys that trl's own CLI scripts use for the same things.
TRL_ALIASES = {"model_name_or_path": "model"}


def _field(setting: Setting) -> tuple:
    default = setting.default
    if isinstance(default, (list, dict)):
        return setting.name, setting.type, dataclasses.field(default_factory=type(default))
    return setting.name, setting.type, dataclasses.field(default=default)


# Everything a training run needs, before anything heavy is loaded: one field per run setting, plus the
# reward weights (given with the rewards) and the GRPOConfig fields from the file and the flags.
RunSettings = dataclasses.make_dataclass(
    "RunSettings",
    [_field(s) for s in RUN_SETTINGS] + [
        ("weights", dict, dataclasses.field(default_factory=dict)),
        ("overwrite", bool, dataclasses.field(default=False)),
        ("grpo", dict, dataclasses.field(default_factory=dict)),
        ("base_grpo", dict, dataclasses.field(default_factory=dict)),  # GRPOConfig values under the profile
    ],
    namespace={"__module__": __name__},
)
RunSettings.__doc__ = "Everything a training run needs, before anything heavy is loaded (see SETTINGS)."


class BoundedInt(click.ParamType):
    """A whole number within its setting's bound (grpo_core.settings.bounds), the one ``--set`` and config files obey."""

    name = "integer"

    def __init__(self, setting: str) -> None:
        self.setting = setting

    def convert(self, value, param, ctx):
        number = click.INT.convert(value, param, ctx)
        problem = check_bound(self.setting, number)
        if problem:
            self.fail(problem, param, ctx)
        return number

    def get_metavar(self, param, ctx=None) -> str:
        return "INTEGER"


def training_options(function):
    """Decorate a click command with one option per setting that has a flag, in declaration order."""
    for setting in reversed(SETTINGS):
        if setting.flag is None:
            continue
        kwargs: dict = {"help": setting.help}
        if setting.metavar:
            kwargs["metavar"] = setting.metavar
        names = [setting.flag, setting.name if setting.name != "config_file" else "config_file"]
        if setting.multiple:
            kwargs["multiple"] = True
        elif setting.type is bool:
            kwargs["is_flag"] = True
            kwargs["default"] = None
        elif setting.type is int:
            kwargs["type"] = BoundedInt(setting.name)
        elif setting.name == "config_file":
            kwargs["type"] = click.Path(dir_okay=False)
        function = click.option(*names, **kwargs)(function)
    return function


def layer(*layers: dict) -> dict:
    """Settings layers (lowest first) merged field by field into one; each layer holds only what it sets.

    A layer's ``dataset`` replaces the dataset and drops lower layers' ``dataset_args``; its ``rewards``
    replace the rewards and keep lower layers' ``reward_args`` and ``reward_schedules`` only for rewards still
    selected; ``reward_args``, ``reward_schedules``, ``dataset_args`` and ``grpo`` merge key by key.
    """
    result: dict = {}
    for top in layers:
        if "dataset" in top and top["dataset"] != result.get("dataset"):
            result.pop("dataset_args", None)
        if "rewards" in top:
            result["weights"] = {}
            kept = set(top["rewards"])
            result["reward_args"] = {k: v for k, v in result.get("reward_args", {}).items() if k in kept}
            result["reward_schedules"] = {k: v for k, v in result.get("reward_schedules", {}).items() if k in kept}
        for key, value in top.items():
            if key == "reward_args":
                merged = {k: dict(v) for k, v in result.get(key, {}).items()}
                for owner, values in value.items():
                    merged.setdefault(owner, {}).update(values)
                result[key] = merged
            elif key in ("dataset_args", "grpo", "base_grpo", "weights", "reward_schedules"):
                result[key] = {**result.get(key, {}), **value}
            else:
                result[key] = value
    return result


def settings_from_layers(*layers: dict) -> RunSettings:
    """``RunSettings`` from layers merged by :func:`layer`."""
    return RunSettings(**layer(*layers))


def describe_settings(settings) -> dict:
    """The run settings as the config-file keys name them (for ``--dry-run``)."""
    return {s.name: getattr(settings, s.name) for s in RUN_SETTINGS}


def settings_table() -> str:
    """The settings as a markdown table (docs/cli.md): config key, flag, type, default, meaning."""
    out = ["| config key | flag | type | default | meaning |", "|---|---|---|---|---|"]
    for s in SETTINGS:
        key = f"`{s.name}`" if s.kind == "run" else f"`{s.name}` (GRPOConfig)" if s.kind == "grpo" else "-"
        flag = f"`{s.flag}`" if s.flag else "-"
        default = "-" if s.default in (None, [], {}) else f"`{s.default}`"
        out.append(f"| {key} | {flag} | {s.type.__name__} | {default} | {s.help.replace('|', '/')} |")
    return "\n".join(out)


def parse_grpo_fields(values: dict, source: str) -> dict:
    """``values`` read with each GRPOConfig field's own type and checked against its bound (grpo_core.settings.bounds);
    an unknown field or a bad value is a UsageError."""
    table = field_table()
    result = {}
    for key, value in values.items():
        own = next((s for s in RUN_SETTINGS if s.name == key), None)
        if own is not None:  # a grpo-core key given where GRPOConfig fields go (e.g. --set compare=0)
            where = f"its flag {own.flag} or " if own.flag else ""
            raise UsageError(f"{source}: '{key}' is a grpo-core key, not a GRPOConfig field; set it with {where}"
                             f"a --config file")
        if key not in table:
            raise UsageError(
                f"{source}: '{key}' is not a GRPOConfig field{did_you_mean(key, table)}; see the fields of "
                f"trl.GRPOConfig, or grpo-core's keys: {', '.join(FILE_KEYS)}"
            )
        parsed = _parse_field(key, value, table[key], source)
        problem = check_bound(key, parsed)
        if problem:
            raise UsageError(f"{source}: {problem}")
        result[key] = parsed
    return result
