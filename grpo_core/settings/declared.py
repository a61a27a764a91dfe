"""Every setting of a run, declared once as a field of ``Settings``: the ``train`` options (and those ``sample`` and
``check`` share), the config-file keys, ``RunSettings``, ``--dry-run``'s settings block and the docs table are all
made from it.

Each field carries in its metadata (as TRL's ``GRPOConfig`` carries its help) the ``help``, the ``flag`` that gives it
on the command line (None: a config file only), the ``metavar`` (for a repeatable flag, the syntax each item is read
with, in grpo_core.settings.layers) and its ``kind`` (see ``KINDS``). GRPOConfig fields are not declared here: they
are TRL's, read with TRL's own field types (grpo_core.settings.grpo_fields). The bound of every number, flag or not,
is in grpo_core.settings.bounds.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any

import click

from grpo_core.errors import UsageError
from grpo_core.settings.bounds import validate_bound
from grpo_core.settings.grpo_fields import field_table, parse_field
from grpo_core.settings.params import did_you_mean

KINDS = {
    "run": "a config-file key and a RunSettings field (and a train option when it has a flag)",
    "file": "a config-file key read apart from RunSettings (the stages, by grpo_core.training.stages)",
    "invocation": "a train option kept in RunSettings for this command only: not a file key, not recorded",
    "place": "where the run executes (machines, accelerate's config): a config-file key and a RunSettings field, "
             "not recorded in run_config.yaml nor compared by --resume, since the same run may move",
    "derived": "a RunSettings field made from other settings, given by no one directly",
    "grpo": "a train option for one GRPOConfig field",
    "command": "a train option that steers the command rather than the run",
}
# Items of these repeatable flags are read by grpo_core.settings.layers.flag_layer, one syntax each.
# The tool-calling turns an episode makes at most (GRPOConfig's max_tool_calling_iterations) unless a run sets it: TRL's
# own default has no limit. Training sets it; the environment checks call a tool this many times in a row.
DEFAULT_TOOL_TURNS = 4
DEFAULT_TOOL_TIMEOUT_S = 30.0  # seconds a tool call may take in training, and in episodes outside it (sample, compare)
REPEATED = ("NAME[=WEIGHT]", "NAME.KEY=VALUE", "NAME=SCHEDULE", "KEY=VALUE", "FIELD=VALUE", "SIGNAL", "ENV")


def setting(default: Any, help: str, flag: str | None = None, metavar: str | None = None, kind: str = "run"):
    """A ``Settings`` field: its default and what the options, files and docs say of it."""
    metadata = {"help": help, "flag": flag, "metavar": metavar, "kind": kind}
    if isinstance(default, (list, dict)):
        return field(default_factory=type(default), metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass
class Settings:
    """Every setting of a run, in the order ``grpo-run train --help`` and the docs show them."""

    rewards: list[str] = setting(
        [], "Rewards to train with, each NAME or NAME=WEIGHT; repeat the flag for several (file: [math=2.0, length], "
        "or a mapping of name to weight).", "--reward", "NAME[=WEIGHT]")
    reward_args: dict[str, dict] = setting(
        {}, "Reward parameters, e.g. length.target=300 (file: {length: {target: 300}}); they win over the values a "
        "dataset asks of a reward.", "--reward-arg", "NAME.KEY=VALUE")
    reward_schedules: dict[str, Any] = setting(
        {}, "A reward weight that changes during training: linear, cosine, steps or adaptive, e.g. math=adaptive or "
        "xml-format=linear:start=1,end=0.2 (file: {math: {kind: adaptive}}).", "--reward-weight", "NAME=SCHEDULE")
    environments: list[str] = setting(
        [], "Environments the model calls tools in during each episode (see `grpo-run environments`): a name, or a "
        "TRL environment class as file.py:Class or module:Class; repeat for several, and each dataset row names its "
        "own in an 'environment' column (file: [calculator]).", "--env", "ENV")
    env_args: dict[str, dict] = setting(
        {}, "Environment parameters, e.g. calculator.max_digits=8 (file: {calculator: {max_digits: 8}}).", "--env-arg",
        "NAME.KEY=VALUE")
    tool_timeout: float = setting(
        DEFAULT_TOOL_TIMEOUT_S, "Seconds a tool call may take in training: a call past it is abandoned, the model is told it failed "
        "(tools/failure_frequency), and tools/<tool>/timeouts counts it.", "--tool-timeout", "SECONDS")
    chat_template: str | None = setting(
        None, "A Jinja chat template file that renders tool calls, for a model with environments whose own template "
        "cannot and whose token format grpo-core has no tool template for.", "--chat-template", "FILE")
    dataset: str | None = setting(None, "Dataset name (see `grpo-run datasets`).", "--dataset", "NAME")
    dataset_args: dict[str, Any] = setting(
        {}, "Dataset parameters, e.g. path=data.jsonl (file: {path: data.jsonl}).", "--dataset-arg", "KEY=VALUE")
    model: str | None = setting(
        None, "Model alias (see `grpo-run models`), local folder or hub id (file: model_name_or_path works too).",
        "--model")
    profile: str = setting("auto", "Hardware profile (see `grpo-run profiles`).", "--profile")
    preflight: bool = setting(True, "Run the quick property checks of the rewards before training.",
                              "--preflight/--no-preflight")
    resume: bool = setting(False, "Continue the run in the output folder from its last checkpoint (checked to be the "
                           "same run).", "--resume")
    overwrite: bool = setting(False, "Replace the outputs of an earlier run in the output folder (only what a run "
                              "writes there).", "--overwrite", kind="invocation")
    merge_lora: bool = setting(False, "With a LoRA profile, also write the merged model to OUTPUT_DIR/merged.",
                               "--merge-lora")
    keep_checkpoints: bool = setting(
        True, "Keep the checkpoints once the run has finished and saved final/ (false: remove them; each holds the "
        "optimizer state, about twice the model's size, needed only to resume).")
    share_prompts: bool = setting(
        True, "Run each distinct prompt of a training batch through the model once and its completions from that "
        "prompt's attention cache: the log-probabilities and gradients of TRL's own pass, with less arithmetic where "
        "prompts are long (false: TRL's own pass, every completion with its own copy of the prompt).")
    compare: int = setting(
        0, "After training, score the base and the trained model on this many held-out prompts: test-split questions "
        "not trained on, else the dataset's last rows, which the run says (0: no comparison; the default run, "
        "grpo-run with no arguments, and a run with --control compare on 200).", "--compare", "N")
    control: str | None = setting(
        None, "Also train a control run after this one, in OUTPUT_DIR-control: the same run, seed and steps with each "
        "step's rewards shuffled among the step's completions (shuffled) or drawn at random with their mean and "
        "spread (random); the comparison then shows base, trained and control, and the gain over the control.",
        "--control", "shuffled|random")
    control_of: str | None = setting(
        None, "Written by --control into a control run's own settings: the folder of the run it is the control of "
        "(config file only).")
    probe: int = setting(
        0, "While training, score the policy greedily on this many held-out prompts before the first step and every "
        "probe_every steps, logged as health/probe/<reward>; a training reward that rises while the probe stays flat "
        "is warned of (0: no probe).", "--probe", "N")
    probe_every: int = setting(5, "Steps between held-out probes (see --probe).", "--probe-every", "K")
    audit_every: int = setting(
        1, "Steps between audits of the step's paid completions for degenerate shapes (health/degenerate_paid).",
        "--audit-every", "N")
    stop_on: list[str] = setting(
        [], "End the run, after saving the step's checkpoint, when this warning fires (exit status 3): dominance, "
        "flat-groups, length, degenerate, probe, tool-collapse, tool-spam, reward-std, kl, clipped, unscored, or any; "
        "repeat for several; none turns off the stops a config file sets. Under reward-std (or any), a run whose every "
        "completion earns the top of every reward for 3 logged steps ends there as a finished run (exit status 0).",
        "--stop-on", "SIGNAL")
    reward_workers: int | None = setting(
        None, "Worker processes that score the rewards' CPU-heavy items (math-verify, sandboxed programs), shared by "
        "every reward of the run (default: every core this process may use, divided among the training processes "
        "of the machine).", "--reward-workers", "N")
    reward_backend: str = setting(
        "local", "Where the CPU-heavy scoring runs: local (this machine's worker processes) or ray (Ray tasks on a "
        "cluster; pip install \"grpo-core[ray]\").", "--reward-backend", "local|ray")
    ray_address: str | None = setting(
        None, "The Ray cluster to score on with --reward-backend ray, e.g. 10.0.0.5:6379 (default: the cluster "
        "RAY_ADDRESS names, else a local one).", "--ray-address", "ADDRESS")
    stages: list[dict] = setting(
        [], "A list of stages run one after the other, each from the model the one before it ended with, e.g. "
        "[{name: format, max_steps: 20}, {name: solve, rewards: [math]}] (config file only).", kind="file")
    config_file: str | None = setting(None, "YAML file of GRPOConfig fields plus the keys of this table.", "--config",
                                      "FILE", kind="command")
    stage: str | None = setting(None, "Run only this stage of a config file's `stages:` (in its folder under the "
                                "output folder).", "--stage", "NAME", kind="command")
    max_steps: int | None = setting(None, "Number of training steps (GRPOConfig.max_steps).", "--max-steps",
                                    kind="grpo")
    output_dir: str | None = setting(None, "Where checkpoints, metrics and the final model go "
                                     "(GRPOConfig.output_dir).", "--output-dir", kind="grpo")
    overrides: list[str] = setting([], "Set any GRPOConfig field, e.g. learning_rate=1e-5.", "--set", "FIELD=VALUE",
                                   kind="command")
    num_processes: int | None = setting(None, "Train in N processes through `accelerate launch`, counted over all "
                                        "machines together (see --num-machines).", "--num-processes", "N",
                                        kind="command")
    num_machines: int | None = setting(
        None, "Machines that train the run together (default 1): start grpo-run on each with the same settings and its "
        "own --machine-rank. --num-processes then counts the processes of all machines together, as accelerate's "
        "does (default: the profile's count on each machine, or one per machine).", "--num-machines", "N",
        kind="place")
    machine_rank: int | None = setting(
        None, "This machine's rank, 0 to N-1 of --num-machines N; rank 0 is the machine at --main-process-ip, and "
        "the one that writes the run folder's shared outputs.", "--machine-rank", "RANK", kind="place")
    main_process_ip: str | None = setting(
        None, "The address of the machine of rank 0, reachable from every machine (needed with --num-machines above "
        "1).", "--main-process-ip", "ADDRESS", kind="place")
    main_process_port: int | None = setting(
        None, "The port on the machine of rank 0 that the machines meet on (accelerate's default: 29500).",
        "--main-process-port", "PORT", kind="place")
    accelerate_config: str | None = setting(
        None, "Your own accelerate config file (as `accelerate config` writes), used in place of the profile's "
        "launcher; the flags above win over its values.", "--accelerate-config", "FILE", kind="place")
    dry_run: bool = setting(False, "Print the resolved run as JSON and exit; loads no model or dataset, runs no "
                            "checks, uses no network.", "--dry-run", kind="command")
    weights: dict[str, float] = setting({}, "The reward weights given with the rewards (NAME=WEIGHT).",
                                        kind="derived")
    grpo: dict[str, Any] = setting({}, "GRPOConfig fields from the config file and the flags, above the profile.",
                                   kind="derived")
    base_grpo: dict[str, Any] = setting({}, "The default run's GRPOConfig fields, under the profile.",
                                        kind="derived")


@dataclass(frozen=True)
class Setting:
    """One declared setting, as the options, file reader and docs read it (made from a ``Settings`` field)."""

    name: str
    type: Any  # str, int, bool, list or dict
    default: Any
    help: str
    flag: str | None = None  # the option's spelling; None: config file only
    metavar: str | None = None
    kind: str = "run"
    multiple: bool = False


def _plain_type(hint) -> type:
    """``list[str]`` -> list, ``str | None`` -> str: the type a file value or an option is checked against."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        hint = next(arg for arg in typing.get_args(hint) if arg is not type(None))
    return typing.get_origin(hint) or hint


def _declared(f: dataclasses.Field, hint) -> Setting:
    default = f.default_factory() if f.default is dataclasses.MISSING else f.default
    meta = f.metadata
    return Setting(f.name, _plain_type(hint), default, meta["help"], meta["flag"], meta["metavar"], meta["kind"],
                   multiple=meta["metavar"] in REPEATED)


_HINTS = typing.get_type_hints(Settings)
DECLARED: tuple[Setting, ...] = tuple(_declared(f, _HINTS[f.name]) for f in dataclasses.fields(Settings))
# What a user gives (the derived fields are made from these).
SETTINGS = tuple(s for s in DECLARED if s.kind != "derived")
# What a config file's top level (and a stage) may set besides GRPOConfig fields, each read with its declared type.
FILE_SETTINGS = tuple(s for s in DECLARED if s.kind in ("run", "place"))
# Keys of a config file that are grpo-core's rather than GRPOConfig fields.
FILE_KEYS = tuple(s.name for s in DECLARED if s.kind in ("run", "file", "place"))
# Keys that trl's own CLI scripts use for the same things.
TRL_ALIASES = {"model_name_or_path": "model"}
BY_NAME = {s.name: s for s in DECLARED}

# Everything a training run needs, before anything heavy is loaded: the declared fields a run keeps.
RunSettings = dataclasses.make_dataclass(
    "RunSettings",
    [(f.name, _HINTS[f.name], dataclasses.field(default=f.default, default_factory=f.default_factory,
                                                metadata=f.metadata))
     for f in dataclasses.fields(Settings) if f.metadata["kind"] in ("run", "invocation", "place", "derived")],
    namespace={"__module__": __name__},
)
RunSettings.__doc__ = "Everything a training run needs, before anything heavy is loaded (the fields of Settings a run keeps)."


class BoundedInt(click.ParamType):
    """A whole number within its setting's bound (grpo_core.settings.bounds), the one ``--set`` and config files obey."""

    name = "integer"

    def __init__(self, setting: str) -> None:
        self.setting = setting

    def convert(self, value, param, ctx):
        number = click.INT.convert(value, param, ctx)
        problem = validate_bound(self.setting, number)
        if problem:
            self.fail(problem, param, ctx)
        return number

    def get_metavar(self, param, ctx=None) -> str:
        return "INTEGER"


def option(name: str, **changes):
    """The click option of setting ``name`` as declared; ``changes`` (help, required, ...) fit it to one command."""
    declared = BY_NAME[name]
    kwargs: dict = {"help": declared.help}
    if declared.metavar:
        kwargs["metavar"] = declared.metavar
    if declared.multiple:
        kwargs["multiple"] = True
    elif declared.type is bool:
        kwargs.update(is_flag=True, default=None)
    elif declared.type is int:
        kwargs["type"] = BoundedInt(name)
    elif declared.metavar == "FILE":
        kwargs["type"] = click.Path(dir_okay=False)
    return click.option(declared.flag, name, **{**kwargs, **changes})


def options(*names: str):
    """Decorate a click command with the declared options ``names``, in that order."""
    def decorate(function):
        for name in reversed(names):
            function = option(name)(function)
        return function
    return decorate


# Every setting that has a flag, in declaration order: the options of ``train``.
training_options = options(*(s.name for s in SETTINGS if s.flag is not None))


def describe_settings(settings) -> dict:
    """The run settings as the config-file keys name them (for ``--dry-run``)."""
    return {s.name: getattr(settings, s.name) for s in FILE_SETTINGS}


def settings_table() -> str:
    """The settings as a markdown table (docs/cli.md): config key, flag, type, default, meaning."""
    out = ["| config key | flag | type | default | meaning |", "|---|---|---|---|---|"]
    for s in SETTINGS:
        key = f"`{s.name}`" if s.name in FILE_KEYS else f"`{s.name}` (GRPOConfig)" if s.kind == "grpo" else "-"
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
        own = BY_NAME.get(key)
        if own is not None and key in FILE_KEYS:  # a grpo-core key given where GRPOConfig fields go (--set compare=0)
            where = f"its flag {own.flag} or " if own.flag else ""
            raise UsageError(f"{source}: '{key}' is a grpo-core key, not a GRPOConfig field; set it with {where}"
                             f"a --config file")
        if key not in table:
            raise UsageError(
                f"{source}: '{key}' is not a GRPOConfig field{did_you_mean(key, [*FILE_KEYS, *table])}; see the fields of "
                f"trl.GRPOConfig, or grpo-core's keys: {', '.join(FILE_KEYS)}"
            )
        parsed = parse_field(key, value, table[key], source)
        problem = validate_bound(key, parsed)
        if problem:
            raise UsageError(f"{source}: {problem}")
        result[key] = parsed
    return result
