"""Multi-stage runs: a config file's ``stages:`` list, each stage a run in its own folder under the output folder,
starting from the model the stage before it ended with.

A stage is ``{name: format, rewards: [...], max_steps: N, ...}``: whatever it names (rewards and their weights,
parameters and schedules, dataset, steps or epochs, GRPOConfig fields) changes; everything else comes from the
top level of the file and the command line. ``OUTPUT/stages.json`` records the stages that finished.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import click

from grpo_core.errors import UsageError
from grpo_core.rundir.claim import Claim, validate_outputs, validate_staged, replace_staged
from grpo_core.rundir.folder import owned_outputs
from grpo_core.rundir.names import FINAL_DIR, MERGED_DIR, METRICS_FILE, PLOT_FILE
from grpo_core.rundir.record import describe
from grpo_core.rundir.stage_outputs import merge_stage_metrics, read_state, write_state
from grpo_core.settings.layers import file_layer, read_config_file
from grpo_core.plugins.loading import validate_model_available
from grpo_core.training import control
from grpo_core.training.resolve import DEFAULT_OUTPUT_DIR, load_data, pick_profile, profile_line, resolve, start_scoring
from grpo_core.training.train import Outcome, train

# Settings of the whole run, set at the top of the file (or on the command line), never inside a stage.
RUN_WIDE = ("model", "profile", "output_dir", "compare", "resume", "preflight", "stages")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
RESERVED = (FINAL_DIR, MERGED_DIR, "completions")  # "completions": the folder TRL's log_completions writes


@dataclass
class Stage:
    name: str
    layer: dict  # the stage's settings layer, between the config file's top level and the flags
    run: object = None  # its trainer.ResolvedRun
    starts_from: str = ""  # what its model is, in words
    claim: Claim | None = None  # its folder, checked (and the checkpoint it resumes from) before any stage trains


@dataclass
class Staged:
    config_file: str
    stages: list
    only: str | None  # --stage NAME
    compare: bool = False  # the file asks for the held-out comparison


def read_stages(config_file: str | None, only: str | None = None) -> Staged | None:
    """The config file's stages, checked (None for a file without ``stages:``); UsageError for a bad stage list."""
    data = read_config_file(config_file) if config_file is not None else {}
    declared = data.get("stages")
    if declared is None:
        if only is not None:
            where = f"config file '{config_file}' has no stages: list" if config_file else "no --config file is given"
            raise UsageError(f"--stage {only}: {where}; give --config FILE whose stages: list names that stage")
        return None
    where = f"config file '{config_file}'"
    if not isinstance(declared, list) or not declared:
        raise UsageError(f"{where}: 'stages' must be a list of stages like [{{name: format, max_steps: 20}}, ...], "
                         f"got {declared!r}")
    stages, seen = [], set()
    for number, entry in enumerate(declared, start=1):
        if not isinstance(entry, dict):
            raise UsageError(f"{where}: stage {number} must be a mapping like {{name: format, max_steps: 20}}, "
                             f"got {entry!r}")
        entry = dict(entry)
        name = entry.pop("name", None)
        if not isinstance(name, str) or not NAME.fullmatch(name) or name in RESERVED:
            shown = "has no name" if name is None else f"has the name {name!r}, which cannot name its folder"
            raise UsageError(f"{where}: stage {number} {shown}; give it name: WORD (letters, digits, - _ .; not "
                             f"{', '.join(RESERVED)})")
        if name in seen:
            raise UsageError(f"{where}: two stages are named '{name}'; give each stage its own name")
        seen.add(name)
        fixed = [key for key in RUN_WIDE if key in entry]
        if fixed:
            raise UsageError(f"{where}, stage '{name}': '{fixed[0]}' is the same for every stage; set it at the top "
                             "level of the file")
        if "num_train_epochs" in entry and "max_steps" not in entry:
            entry["max_steps"] = -1  # the stage counts epochs, whatever the top level's max_steps
        stages.append(Stage(name, file_layer(entry, f"{config_file}', stage '{name}")))
    if only is not None and only not in seen:
        raise UsageError(f"--stage '{only}' is not a stage of {where}; its stages: {', '.join(s.name for s in stages)}")
    _validate_top_schedules(data, stages, where)
    return Staged(config_file, stages, only, bool(data.get("compare")))


def _validate_top_schedules(data: dict, stages: list, where: str) -> None:
    top = data.get("reward_schedules") or {}
    rewards = [str(r).partition("=")[0].strip() for r in (data.get("rewards") or [])]
    for stage in stages:
        rewards += stage.layer.get("rewards", [])
    for name in top if isinstance(top, dict) else ():
        if name not in rewards:
            raise UsageError(f"{where}: reward_schedules gives a schedule for reward '{name}', which no stage "
                             f"selects ({', '.join(dict.fromkeys(rewards)) or 'none'}); add it to a stage's rewards "
                             "or remove its schedule")


def resolve_stages(staged: Staged, options: dict, settings_from_options, num_processes=None,
                   dry_run: bool = False) -> Path:
    """Resolve every stage (nothing loaded); each stage's model is the one the stage before it ends with.

    ``settings_from_options(**options, stage_layer=...)`` layers a stage's settings (``runner``'s).
    """
    options = dict(options)
    top = settings_from_options(**options)
    root = Path(top.grpo.get("output_dir") or DEFAULT_OUTPUT_DIR).absolute()
    if staged.compare or options.get("compare"):  # the built-in default run's comparison is not asked for here
        raise UsageError("compare is not run after a staged run; remove it and compare with grpo-run sample --model "
                         f"BASE --model {root}/{staged.stages[-1].name}/final")
    given_model = options.get("model")
    previous = None
    for stage in staged.stages:
        settings = settings_from_options(**options, stage_layer=stage.layer)
        settings.compare = 0
        settings.grpo["output_dir"] = str(root / stage.name)
        lora_adapter = None
        stage.starts_from = f"model {settings.model}"
        if previous is not None and not (staged.only == stage.name and given_model and not _finished(root, previous)):
            final = root / previous.name / FINAL_DIR
            stage.starts_from = f"the final model of stage '{previous.name}' ({final})"
            if pick_profile(settings.profile)[0].lora:
                lora_adapter = str(final)  # the LoRA adapter carries over onto the same base model
            else:
                settings.model = str(final)
            if staged.only == stage.name and not dry_run and not _finished(root, previous):
                raise UsageError(f"--stage {stage.name} starts from the final model of stage '{previous.name}', which "
                                 f"is not in {root / previous.name} yet; run that stage first, or give --model")
        try:
            stage.run = resolve(settings, log=lambda message: None, load_dataset=False,
                                         num_processes=num_processes)
        except UsageError as error:
            raise UsageError(f"stage '{stage.name}': {error}") from None
        stage.run.lora_adapter = lora_adapter
        if stage.run.profile.launcher or (num_processes or 1) > 1 or stage.run.place.machines > 1 \
                or "config_file" in stage.run.place.options:
            raise UsageError("a staged run trains in one process, and this one would launch several; pick a "
                             "single-process profile with --profile, or run each stage with --stage")
        previous = stage
    return root


def training_profile_line(staged: Staged) -> str:
    return profile_line(staged.stages[0].run)


def describe_stages(staged: Staged, root: Path) -> str:
    """``--dry-run`` of a staged run: every stage resolved, in order."""
    shown = [{"name": s.name, "folder": str(root / s.name), "starts_from": s.starts_from,
              **({"adapter": s.run.lora_adapter} if s.run.lora_adapter else {}), **json.loads(describe(s.run))}
             for s in _selected(staged)]
    return json.dumps({"output_dir": str(root), "stages": shown}, indent=2, default=str)


def _selected(staged: Staged) -> list:
    return [s for s in staged.stages if staged.only in (None, s.name)]


def _finished(root: Path, stage: Stage) -> bool:
    return stage.name in read_state(root) and (root / stage.name / FINAL_DIR).is_dir()


def run_stages(staged: Staged, options: dict, settings_from_options, preflight, dry_run=False, num_processes=None,
               log=print, argv=()) -> None:
    """Run the stages in order (or ``--stage`` alone): every stage checked, its data read and preflighted first.

    ``settings_from_options`` and ``preflight`` are grpo_core.training.runner's (given, so this module does not import it).
    """
    root = resolve_stages(staged, options, settings_from_options, num_processes, dry_run)
    if dry_run:
        log(training_profile_line(staged))
        click.echo(describe_stages(staged, root))
        return
    held = Claim(root).hold()  # the whole staged run's folder; each stage holds its own folder while it trains
    try:
        todo = _claim_outputs(staged, root, options)
        _prepare(staged, todo, root, options, preflight, log)
        for stage in todo:
            _train_stage(staged, stage, root, log, argv)
    finally:
        held.release()
    log(f"stages done: {', '.join(s.name for s in todo) or 'none left to train'}; metrics in "
        f"{root / METRICS_FILE}, reward curve in {root / PLOT_FILE}")


def _claim_outputs(staged: Staged, root: Path, options: dict) -> list:
    """The stages to train, each with its folder checked and claimed (``rundir.claim`` holds the rules)."""
    # ``resume`` may come from the file's top level too; a stage cannot set it
    resume, overwrite = bool(staged.stages[0].run.settings.resume), bool(options.get("overwrite"))
    todo = validate_staged(root, [s.name for s in staged.stages], [s.name for s in _selected(staged)], resume, overwrite)
    stages = [s for s in _selected(staged) if s.name in todo]
    for stage in stages:
        stage.run.settings.resume, stage.run.settings.overwrite = todo[stage.name]
        stage.claim = validate_outputs(stage.run)
    return stages


def _prepare(staged: Staged, todo: list, root: Path, options: dict, preflight, log) -> None:
    """Before the first stage trains: the first model is there, and every stage's data and rewards pass the checks."""
    if todo:
        validate_model_available(todo[0].run.model)
    for stage in todo:
        start_scoring(stage.run)  # each stage's cluster is reached before any model loads
        load_data(stage.run)
    log(training_profile_line(staged))
    for stage in todo:
        if stage.run.settings.preflight:
            log(f"stage '{stage.name}': preflight checks of {', '.join(r.__name__ for r in stage.run.rewards)}")
            preflight(stage.run)
    if options.get("overwrite"):
        removed = replace_staged(root, [s.name for s in todo], [s.name for s in staged.stages])
        if removed:
            log(f"--overwrite: replaced the earlier run's {', '.join(removed)} in {root}")
        for stage in todo:
            stage.run.settings.overwrite = False


def _train_stage(staged: Staged, stage: Stage, root: Path, log, argv) -> None:
    log(f"stage '{stage.name}' ({staged.stages.index(stage) + 1} of {len(staged.stages)}): starts from "
        f"{stage.starts_from}; outputs in {root / stage.name}")
    interrupted_at = []

    def stage_log(message: str) -> None:
        if message.startswith(("interrupted at step", "stopped at step")):
            interrupted_at.append(message)
            return
        log(message)

    start_scoring(stage.run)
    try:
        trained = train(stage.run, stage.claim.hold(), log=stage_log)
    finally:
        stage.claim.release()
    stopped = trained.outcome is not Outcome.FINISHED
    steps = int(trained.trainer.state.global_step)
    if not stopped:  # recorded first: the merged metrics count a finished stage by its steps
        finished = read_state(root)
        finished[stage.name] = {"steps": steps}
        write_state(root, finished)
    merge_stage_metrics(root, staged.stages)  # a staged run is one process (resolve_stages refuses more)
    if stopped:
        command = [a for a in argv if a not in ("--overwrite", "--resume")] + ["--resume"]
        why = "interrupted" if trained.outcome is Outcome.INTERRUPTED else f"stopped by --stop-on {trained.stopped_by}"
        log(f"stage '{stage.name}' {why} at step {steps}; checkpoint saved in "
            f"{root / stage.name}. Resume with: grpo-run {shlex.join(command)}")
        raise SystemExit(trained.outcome.exit_status)


def control_options(staged: Staged, options: dict, root: Path, resume: bool) -> dict:
    """The options that train a staged run's control: the same stages in ``ROOT-control``, each a control run. Its
    folder is checked here, before any stage trains; with --resume, a control that has not started starts."""
    folder = control.control_folder(root)
    names = [s.name for s in staged.stages]
    resumes = resume and any(owned_outputs(folder / name) for name in names)
    overwrite = bool(options.get("overwrite")) or (resume and not resumes)
    validate_staged(folder, names, [s.name for s in _selected(staged)], resumes, overwrite)
    return {**options, "output_dir": str(folder), "control_of": str(root), "resume": resumes or None,
            "overwrite": overwrite or None}


def run_control(staged: Staged, options: dict, settings_from_options, preflight, num_processes, log, argv) -> None:
    """Train the control of a staged run (``control_options``), then say how to compare base, trained and control."""
    folder = Path(options["output_dir"])
    kind = settings_from_options(**options).control
    log(f"control run ({control.KINDS[kind]}): outputs in {folder}")
    run_stages(staged, {**options, "preflight": False}, settings_from_options, preflight,
               num_processes=num_processes, log=log, argv=argv)
    last = staged.stages[-1]
    given = [f"--reward {r.__name__}" for r in last.run.rewards]
    given += [f"--dataset-arg {key}={value}" for key, value in last.run.settings.dataset_args.items()]
    log(f"compare base, trained and control on held-out prompts with: grpo-run sample --model "
        f"{staged.stages[0].run.model} --model {Path(options['control_of']) / last.name / FINAL_DIR} --model "
        f"{folder / last.name / FINAL_DIR} --dataset {last.run.settings.dataset} {' '.join(given)}")
