"""From command-line options to a finished run."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import click

from grpo_core.checks.report import format_report, preflight_summary
from grpo_core.checks.env_properties import check_environment
from grpo_core.checks.results import CheckReport
from grpo_core.checks.run import dataset_rows, preflight as preflight_checks
from grpo_core.checks.texts import DEFAULT_MAX_COMPLETION_LENGTH
from grpo_core.errors import GrpoError, UsageError
from grpo_core.plugins import get_registry
from grpo_core.plugins.loading import (episode_rewards, is_episode_reward, load_environments, load_rewards,
                                       model_path, validate_columns, validate_model_available, validate_model_name)
from grpo_core.rundir import outputs
from grpo_core.rundir.claim import replace_outputs, validate_outputs
from grpo_core.rundir.names import METRICS_FILE, RUN_CONFIG, shown
from grpo_core.rundir.record import describe, is_run_folder, run_folder_layer, run_folder_model
from grpo_core.settings.declared import DEFAULT_TOOL_TIMEOUT_S, DEFAULT_TOOL_TURNS
from grpo_core.settings.layers import flag_layer, layer, settings_from_options
from grpo_core.training import collector, control, launch, progress, stages
from grpo_core.training.aggregation import aggregation_lines
from grpo_core.training.card import write_model_card
from grpo_core.training.resolve import DEFAULT_OUTPUT_DIR, load_data, profile_line, resolve, start_scoring
from grpo_core.training.rollouts import EpisodeSettings
from grpo_core.training.tools import chat_template, model_is_folder, pick_template, validate_environment_column
from grpo_core.training.train import Outcome, claim_folder, train
from grpo_core.training.sample import (comparison_heading, format_comparison, has_held_out_split, held_out_rows,
                                       score_models)

# The quick checks before training must end within 3 s for all rewards together; the checks overshoot
# the time they are given by a fraction of a second (benchmarks/bench_preflight.py measures the total).
PREFLIGHT_BUDGET_S = 2.5
PREFLIGHT_EPISODES = 5  # drawn episodes per property of each environment (about half a second for the calculator)


def run_from_options(dry_run=False, num_processes=None, argv=(), stage=None, **options) -> None:
    """Input checks first (names and values, the model, the dataset), then the output folder, preflight, trainer."""
    with collector.loading():  # until the training loop starts (grpo_core.training.collector)
        _run(dry_run, num_processes, argv, stage, options)


def _run(dry_run, num_processes, argv, stage, options: dict) -> None:
    log = lambda message: click.echo(message, err=True)
    started = time.monotonic()
    total = lambda: log(f"total time: {progress.duration(time.monotonic() - started)}")  # noqa: E731
    staged = stages.read_stages(options.get("config_file"), stage)
    if staged is not None:  # a config file with stages: each stage a run in its own folder
        control_options = _staged_control(staged, options, dry_run)
        stages.run_stages(staged, options, settings_from_options, preflight, dry_run=dry_run,
                          num_processes=num_processes, log=log, argv=argv)
        if control_options is not None:
            stages.run_control(staged, control_options, settings_from_options, preflight, num_processes, log, argv)
        if not dry_run:
            total()
        return
    settings = settings_from_options(**options)
    launched = launch.is_launched()
    if not launched:
        settings, implied = control.with_comparison(settings)
        if implied:
            log(implied)
    run = resolve(settings, log=log, load_dataset=False, num_processes=num_processes)
    command = None if launched else launch.launch_command(
        run.profile, num_processes, [a for a in argv if a != "--dry-run"], run.place
    )
    control_run = _resolve_control(run, command, log) if settings.control and not launched else None
    if dry_run:
        if model_is_folder(run.model):  # which tool template the model gets, read from its tokenizer
            pick_template(run)
        log(profile_line(run))
        _log_aggregation(run, log)
        click.echo(describe(run, command))
        return
    compare = settings.compare and not launched  # the held-out comparison comes first, then the summary
    if not launched:
        validate_model_available(run.model)
        pick_template(run)  # a model that cannot call tools is the user's input: said before anything loads
        if run.environments:
            log(f"chat template: {run.chat_template_source}")
    start_scoring(run)
    load_data(run)  # a bad dataset is the user's input: said before the output folder's state
    if control_run is not None:  # its folder is checked before the run trains, not found taken after it
        control_run.dataset = run.dataset
        validate_outputs(control_run)
    claim = claim_folder(run, log)
    try:
        log(profile_line(run))
        if not launched:
            _log_aggregation(run, log)
        if settings.preflight and not launched:
            preflight(run)
        if command is not None:
            if run.place.main_machine:
                replace_outputs(run, log)
            click.echo(f"launching: {' '.join(command)}", err=True)
            code = _wait_for(command, claim.checkpoint)
            total()
            if code:
                raise SystemExit(code)
            return
        if compare:
            _warn_trained_rows(run, settings.compare, log)
        trained = train(run, claim, log=log, summary=not compare)
    finally:
        claim.release()
    if trained.outcome is not Outcome.FINISHED:
        if not launched:
            total()
        raise SystemExit(trained.outcome.exit_status)  # scripts can tell an interrupted or stopped run
    if control_run is not None:
        log(f"control run ({control.KINDS[settings.control]}): outputs in {control_run.grpo['output_dir']}")
        control_claim = claim_folder(control_run, log)
        try:
            outcome = train(control_run, control_claim, log=log, summary=False).outcome
        finally:
            control_claim.release()
        if outcome is not Outcome.FINISHED:
            total()
            raise SystemExit(outcome.exit_status)
    if compare:
        _compare(run, settings.compare, control_run)
    if not launched:
        total()


def _staged_control(staged, options: dict, dry_run: bool) -> dict | None:
    """With --control, the options of a staged run's control (the same stages, in ROOT-control), after checking that
    folder before any stage trains; None without --control."""
    top = settings_from_options(**options)
    control.validate_control(top)
    if not top.control or control.is_control(top) or dry_run:
        return None
    root = Path(top.grpo.get("output_dir") or DEFAULT_OUTPUT_DIR).absolute()
    return stages.control_options(staged, options, root, bool(top.resume))


def _resolve_control(run, command, log):
    """The control run of ``run`` (--control), resolved like it; it trains in this process after the run."""
    if command is not None:
        raise UsageError("--control trains the control in this process after the run, and this run is launched in "
                         "several processes; train the control on its own with --set output_dir=FOLDER-control and "
                         "control_of: FOLDER in a --config file, or pick a single-process profile")
    settings = control.control_settings(run.settings, Path(run.grpo["output_dir"]), run.settings.resume)
    return resolve(settings, log=log, load_dataset=False)


def _log_aggregation(run, log) -> None:
    """Each reward's range, and whether the widest decides the advantages (grpo_core.training.aggregation)."""
    for line in aggregation_lines(run.rewards, run.grpo):
        log(line)


def _wait_for(command: list[str], checkpoint) -> int:
    """Run the launched processes; Ctrl-C reaches them (they save and stop) while this process waits for them."""
    previous = signal.signal(signal.SIGINT, lambda *_: None)
    try:
        return launch.run_launched(command, checkpoint)
    finally:
        signal.signal(signal.SIGINT, previous)


def _warn_trained_rows(run, n: int, log) -> None:
    """Before training: a comparison on rows the run trains on is said to be one, so it is not read as held out."""
    if not has_held_out_split(run.dataset_spec, run.dataset_params):
        log(f"warning: --compare {n}: dataset '{run.settings.dataset}' has no test split, so the comparison after "
            f"training scores its last {n} rows, which training also sees (not a held-out measure)")


def _compare(run, n: int, control_run=None) -> None:
    """Score the base model and the trained one (and its control) on the same held-out prompts, then show the
    training trend."""
    output_dir = Path(run.grpo["output_dir"])
    final = str(output_dir / "final")
    if not Path(final).is_dir():  # interrupted: nothing to compare yet
        return
    spec = get_registry().dataset(run.settings.dataset)
    rows, where = held_out_rows(spec, run.dataset_params, run.dataset, n)
    tokens = int(run.grpo.get("max_completion_length") or 64)
    models = [(f"{run.model} (before)", model_path(run.model)), (f"{shown(final)} (after)", final)]
    if control_run is not None:
        models.append((f"{shown(Path(control_run.grpo['output_dir']) / 'final')} (control)",
                       str(Path(control_run.grpo["output_dir"]) / "final")))
    episodes = EpisodeSettings.of_run(run)  # with environments, each row is an episode with the run's tools
    scored = run.rewards if episodes else [r for r in run.rewards if not is_episode_reward(r)]
    log = lambda message: click.echo(f"comparison: {message}", err=True)  # noqa: E731
    log(f"generating greedily with {len(models)} models on {where}")
    results = score_models(models, rows, scored, max_new_tokens=tokens, episodes=episodes, log=log)
    heading = f"{comparison_heading(spec, run.dataset_params)}{where}"
    click.echo(f"{heading}:", err=True)
    click.echo(format_comparison(results), err=True)
    gains = []
    if control_run is not None:
        held = has_held_out_split(spec, run.dataset_params)
        on = f"{len(rows)} questions" if held else f"{len(rows)} rows"
        gains = control.gain_lines(results, [r.__name__ for r in scored], on, held)
        for line in gains:
            click.echo(line, err=True)
    write_model_card(output_dir, {"heading": heading, "results": results, "gains": gains})
    records = outputs.read_metrics(output_dir / METRICS_FILE)
    click.echo(outputs.run_summary(records, run.rewards, run.schedules), err=True)


def preflight(run) -> None:
    """The quick property checks of the run's rewards, and of its environments' episodes, on its dataset's rows;
    GrpoError when one fails."""
    rewards = [r for r in run.rewards if not is_episode_reward(r)]  # an episode's reward: the environment's checks
    rows = dataset_rows(run.dataset)
    checked = [r.__name__ for r in rewards] + [f"environment {e.name}" for e in run.environments]
    if checked:
        click.echo(f"preflight: quick checks of {', '.join(checked)} on {len(rows)} dataset rows", err=True)
    tokens = int(run.grpo.get("max_completion_length") or DEFAULT_MAX_COMPLETION_LENGTH)
    report = (preflight_checks(rewards, rows, budget_s=PREFLIGHT_BUDGET_S, max_completion_length=tokens) if rewards
              else CheckReport(seed=0))
    for environment in run.environments:  # a few episodes each, each call under the run's own tool limit
        report.results.extend(check_environment(environment, rows, seed=0, max_examples=PREFLIGHT_EPISODES,
                                                call_timeout_s=run.settings.tool_timeout))
    if not report.results:
        return
    if not report.ok:
        click.echo(format_report(report), err=True)
        raise GrpoError("preflight checks failed (shown above); fix the reward or environment, or skip the checks "
                        "with --no-preflight")
    for line in preflight_summary(report, len(rows)):
        click.echo(line, err=True)


def sample_models(models, dataset, dataset_args, rewards, reward_args, n, max_new_tokens, temperature, output=None,
                  environments=(), env_args=(), given_template=None, tool_timeout=DEFAULT_TOOL_TIMEOUT_S,
                  tool_turns=None, log=None, top_k=0):
    """Score each model's completions on ``n`` held-out rows (``sample.held_out_rows``: the comparison's rows); with
    ``environments``, each completion is an episode that may call their tools, scored with their rewards too. A run's
    folder among ``models`` stands for its final model, and its run_config.yaml gives the dataset, its arguments, the
    rewards and environments (and the completion length) that are not given here."""
    from grpo_core.training.build import quiet_libraries  # transformers' TrainerCallback: heavy

    log = log or (lambda message: click.echo(message, err=True))
    quiet_libraries()
    paths = [run_folder_model(model) if is_run_folder(model) else model for model in models]
    for path in paths:
        validate_model_name(path)
        validate_model_available(path)
    given, runs = _sample_settings(models, dataset, dataset_args, rewards, reward_args, environments, env_args,
                                   given_template, log)
    if max_new_tokens is None:  # the run's completion length, as its comparison uses
        max_new_tokens = int(next(iter(runs.values()), {}).get("grpo", {}).get("max_completion_length") or 64)
    name = given["dataset"]
    loaded = load_rewards(given.get("rewards", []), params=given.get("reward_args"), weights=given.get("weights"),
                          dataset=name)
    selected = load_environments(list(given.get("environments") or []), given.get("env_args"))
    loaded += episode_rewards(selected)
    spec = get_registry().dataset(name)
    params = spec.resolve(given.get("dataset_args"))
    rows, where = held_out_rows(spec, params, spec.load(**params), n)
    held_out = has_held_out_split(spec, params)
    if not runs and not held_out:
        where = f"the dataset's last {len(rows)} rows"
    # the parameters the rows were drawn with: from the test split where the dataset has one
    shown = ", ".join(f"{k}={v}" for k, v in {**params, **({"split": "test"} if held_out else {})}.items()
                      if v is not None)
    log(f"prompts: {where}, of dataset '{name}'" + (f" ({shown})" if shown else ""))
    validate_columns(rows, [r for r in loaded if not is_episode_reward(r)], name)
    validate_environment_column(rows, selected, name)
    results = []
    for index, (model, path) in enumerate(zip(models, paths), start=1):
        episodes = None
        if selected:  # each model renders tools with its own template, or the one it is given
            template, _ = chat_template(model_path(path), path, given.get("chat_template"))
            episodes = EpisodeSettings(selected, tool_turns or DEFAULT_TOOL_TURNS, tool_timeout, template)
        log(f"scoring {path}, model {index} of {len(models)}, on {len(rows)} {'episodes' if selected else 'prompts'}")
        results += score_models([(path, model_path(path))], rows, loaded, max_new_tokens, temperature=temperature,
                                episodes=episodes, top_k=top_k)
    if output:
        with open(output, "w") as handle:
            for result in results:
                for record in result["samples"]:
                    handle.write(json.dumps({"model": result["model"], **record}, default=str) + "\n")
    return results


def _sample_settings(models, dataset, dataset_args, rewards, reward_args, environments, env_args, given_template, log):
    """What ``grpo-run sample`` scores, on which data: the flags over the first run folder's run_config.yaml (the same
    layering as training's flags over a config file), and the run folders among ``models`` with what each says."""
    top = flag_layer(rewards=rewards, reward_args=reward_args, dataset_args=dataset_args, environments=environments,
                     env_args=env_args, dataset=dataset, chat_template=given_template)
    runs = {model: run_folder_layer(model) for model in models if is_run_folder(model)}
    sampled = lambda run: layer({k: v for k, v in run.items() if k != "grpo"}, top)  # noqa: E731
    given = sampled(next(iter(runs.values()), {}))
    for model, run in list(runs.items())[1:]:
        if sampled(run) != given:
            raise UsageError(f"run folders '{next(iter(runs))}' and '{model}' were trained on different data or "
                             "rewards; name the prompts with --dataset and the rewards with --reward")
    if runs:
        log(f"sample: what is not given here (dataset, rewards, completion length) comes from "
            f"{Path(next(iter(runs))) / RUN_CONFIG}")
    if not given.get("dataset"):
        raise UsageError("grpo-run sample needs --dataset, or a run's folder as --model (its run_config.yaml names "
                         "the dataset)")
    if not given.get("rewards") and not given.get("environments"):
        raise UsageError("grpo-run sample needs --reward (or --env), or a run's folder as --model (its "
                         "run_config.yaml names the rewards)")
    return given, runs
