"""From command-line options to a finished run."""

from __future__ import annotations

import click

from grpo_core.config import RunSettings, apply_config_file, default_config_file, parse_set_values, read_config_file
from grpo_core.options import parse_key_values, parse_reward_options


def settings_from_options(
    rewards=(), reward_args=(), dataset=None, dataset_args=(), model=None, profile=None, config_file=None,
    max_steps=None, output_dir=None, overrides=(), resume=None, merge_lora=None, no_preflight=False, **_ignored,
) -> RunSettings:
    """Profile defaults come later; here: the config file, then the flags on top."""
    settings = RunSettings()
    if not (config_file or rewards or dataset or model):
        config_file = default_config_file()  # the embedded default run
    if config_file:
        apply_config_file(settings, read_config_file(config_file), config_file)
    names, weights, args = parse_reward_options(rewards, reward_args)
    if names:
        settings.rewards, settings.weights = names, weights
    for owner, values in args.items():
        settings.reward_args.setdefault(owner, {}).update(values)
    settings.dataset_args.update(parse_key_values(dataset_args, "--dataset-arg"))
    for key, value in (("dataset", dataset), ("model", model), ("profile", profile), ("resume", resume),
                       ("merge_lora", merge_lora)):
        if value is not None:
            setattr(settings, key, value)
    if no_preflight:
        settings.preflight = False
    settings.grpo.update(parse_set_values(parse_key_values(overrides, "--set")))
    if max_steps is not None:
        settings.grpo["max_steps"] = max_steps
    if output_dir is not None:
        settings.grpo["output_dir"] = output_dir
    return settings


def run_from_options(dry_run=False, num_processes=None, argv=(), **options) -> None:
    from grpo_core import launch, training

    settings = settings_from_options(**options)
    run = training.resolve(settings, log=lambda message: click.echo(message, err=True))
    command = None if launch.is_launched() else launch.launch_command(
        run.profile, num_processes, [a for a in argv if a != "--dry-run"]
    )
    if settings.preflight and not launch.is_launched():
        _preflight(run)
    if dry_run:
        click.echo(training.describe(run, command))
        return
    if command is not None:
        click.echo(f"launching: {' '.join(command)}", err=True)
        code = launch.run_launched(command)
        if code:
            raise SystemExit(code)
        return
    compare = settings.compare and not launch.is_launched()
    training.train(run, log=lambda message: click.echo(message, err=True), summary=not compare)
    if compare:
        _compare(run, settings.compare)


def _compare(run, n: int) -> None:
    """Score the base model and the trained one on the same held-out prompts, then show the training trend."""
    from pathlib import Path

    from grpo_core import outputs
    from grpo_core.plugins import get_registry
    from grpo_core.sample import format_comparison, held_out_rows, score_models
    from grpo_core.training import resolve_model

    output_dir = Path(run.grpo["output_dir"])
    final = str(output_dir / "final")
    if not Path(final).is_dir():  # interrupted: nothing to compare yet
        return
    spec = get_registry().dataset(run.settings.dataset)
    rows, where = held_out_rows(spec, run.dataset_params, run.dataset, n)
    tokens = int(run.grpo.get("max_completion_length") or 64)
    models = [(f"{run.model} (before)", resolve_model(run.model)), (f"{final} (after)", final)]
    results = score_models(models, rows, run.rewards, max_new_tokens=tokens)
    click.echo(f"held-out comparison, greedy, on {where}:", err=True)
    click.echo(format_comparison(results), err=True)
    records = outputs.read_metrics(output_dir / outputs.METRICS_FILE)
    click.echo(outputs.format_summary(outputs.summarize(records, [r.__name__ for r in run.rewards])), err=True)


def _preflight(run) -> None:
    from grpo_core.checks import format_report, preflight
    from grpo_core.errors import GrpoError

    sample = run.dataset.select(range(min(len(run.dataset), 32)))
    report = preflight(run.rewards, [dict(row) for row in sample])
    if not report.ok:
        click.echo(format_report(report), err=True)
        raise GrpoError("preflight checks failed (shown above); fix the reward, or skip the checks with --no-preflight")
    click.echo("preflight: rewards passed their quick property checks", err=True)


def sample_models(models, dataset, dataset_args, rewards, reward_args, n, max_new_tokens, temperature, output=None):
    """Score each model's completions on the dataset's last ``n`` rows (see grpo_core.sample)."""
    import json

    from grpo_core import training
    from grpo_core.data import check_columns
    from grpo_core.plugins import get_registry
    from grpo_core.rewards import load_rewards
    from grpo_core.sample import held_out, score_models

    training._quiet_libraries()
    names, weights, args = parse_reward_options(rewards, reward_args)
    loaded = load_rewards(names, args=args, weights=weights)
    for model in models:
        training.check_model_name(model)
    spec = get_registry().dataset(dataset)
    rows = held_out(spec.load(**spec.resolve(parse_key_values(dataset_args, "--dataset-arg"))), n)
    check_columns(rows, loaded, dataset)
    paths = [(model, training.resolve_model(model)) for model in models]
    results = score_models(paths, rows, loaded, max_new_tokens, temperature=temperature)
    if output:
        with open(output, "w") as handle:
            for result in results:
                for record in result["samples"]:
                    handle.write(json.dumps({"model": result["model"], **record}, default=str) + "\n")
    return results
