"""``grpo-run check``: the property checks on installed rewards, from the command line.

``grpo-run --help`` imports this module, so nothing it imports may load hypothesis or the training stack.
"""

from __future__ import annotations

import math
import os
import random
import shutil
import sys
import time

import click

from grpo_core.checks.env_properties import check_environment
from grpo_core.checks.episodes import DEFAULT_CALL_TIMEOUT_S
from grpo_core.checks.executor import abandoned_calls
from grpo_core.checks.progress import Progress
from grpo_core.checks.report import format_report
from grpo_core.checks.results import FAIL, SKIP, CheckReport, PropertyResult
from grpo_core.checks.run import DEFAULT_BUDGET_S, DEFAULT_MAX_EXAMPLES, dataset_rows, run_checks
from grpo_core.errors import PluginError, UsageError
from grpo_core.plugins import get_registry
from grpo_core.checks.texts import DEFAULT_MAX_COMPLETION_LENGTH
from grpo_core.plugins.loading import load_dataset, load_environments, load_rewards, validate_columns
from grpo_core.settings.declared import option
from grpo_core.settings.layers import flag_layer, parse_key_values, parse_reward_options


class _BadInput(click.ClickException):
    """Shown as ``Error: <message>``; exit code 2, as for every usage error of grpo-run."""

    exit_code = 2


@click.command("check")
@option("rewards", help="A reward to check; repeat for several (default: every installed reward, except those checked "
        "only by name, such as a judge that starts a server). Weights are ignored.")
@option("reward_args", help="A reward parameter to check with, e.g. length.target=300.")
@option("environments", help="An environment to check (a name, or a TRL environment class as file.py:Class): "
        "episodes from --dataset's rows; repeat for several. Without --reward, only the environments are checked.")
@option("env_args", help="An environment parameter to check with, e.g. calculator.max_calls=4.")
@option("dataset", help="Check on this installed dataset's rows, as training's preflight does (default: rows each "
        "reward declares, or drawn text); --env needs it.")
@option("dataset_args", help="A parameter of --dataset, e.g. path=data.jsonl.")
@click.option("--max-examples", type=click.IntRange(min=1), default=DEFAULT_MAX_EXAMPLES, show_default=True,
              help="Examples hypothesis draws per property.")
@click.option("--budget", type=float, default=DEFAULT_BUDGET_S, show_default=True, metavar="SECONDS",
              help="About how long the checks of each reward may take. A slow reward (a judge) is timed on its "
              "first calls, which do not count, and checked on as many examples as fit; the report says what was "
              "shortened or skipped for time.")
@click.option("--seed", type=int, help="Seed for the examples; a failing run prints the seed that repeats it.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON instead of a table.")
@option("tool_timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_CALL_TIMEOUT_S, show_default=True,
        help="Seconds each tool call (and reset, and get_reward) of an --env episode may take; give a run's "
        "--tool-timeout to check its tools against it.")
@click.option("--max-completion-length", type=click.IntRange(min=1), default=DEFAULT_MAX_COMPLETION_LENGTH,
              show_default=True, metavar="TOKENS", help="The most tokens a run generates per completion (its "
              "max_completion_length): long hostile texts are sized to it, at 16 characters a token.")
def check(rewards, reward_args, environments, env_args, dataset, dataset_args, max_examples, budget, seed, as_json,
          tool_timeout, max_completion_length):
    """Check rewards with property-based tests before training with them.

    For every reward: one float or None per completion, finite and inside its declared bounds,
    deterministic, independent of the rest of the batch, the same score for plain-string and
    chat-message completions, no crash on hostile text, each completion scored within a time
    limit, the directions and gold completions its plugin declares, and completions that skip the
    task (number sprays, filler in tags, blank or near-repeated text, the gold among other numbers)
    scoring no more than they should. With --dataset, every check runs on that dataset's rows. A
    failure shows the smallest input hypothesis found. Exits with 1 when any property fails.

    With --env, each environment's episodes, started from --dataset's rows: reset isolation,
    determinism, the declared gold episode, do-nothing episodes, no leak of the gold answer,
    hostile tool arguments, the reward's bounds and each call's time limit.
    """
    if not (math.isfinite(budget) and budget > 0):
        raise _BadInput(f"--budget takes a positive number of seconds, e.g. --budget 300; got {budget:g}")
    if dataset_args and not dataset:
        raise _BadInput("--dataset-arg needs --dataset NAME: the dataset whose rows the checks use")
    if (environments or env_args) and not dataset:
        raise _BadInput("--env needs --dataset NAME: each episode starts from one of its rows")
    try:
        names, _weights, params = parse_reward_options(rewards, reward_args)
        env_names, env_params = _environment_options(environments, env_args)
        environments = load_environments(env_names, env_params) if env_names else []
        load_failures, left_out = [], []
        if environments and not names:
            selected = []
        elif names:
            selected = load_rewards(names, params=params, dataset=dataset)
        else:
            specs = get_registry().items["rewards"]
            installed = sorted(specs)
            left_out = [(name, specs[name].checks.by_name_only) for name in installed
                        if specs[name].checks.by_name_only and name not in params]
            installed = [name for name in installed if name not in dict(left_out)]
            if params:
                load_rewards(list(params), params=params, dataset=dataset)  # parameters for a reward that is not installed
            selected = []
            for name in installed:
                try:  # a reward whose defaults do not load is a failure of that reward, not of the command
                    selected.extend(load_rewards([name], params={name: params[name]} if name in params else None,
                                                 dataset=dataset))
                except (UsageError, PluginError) as error:
                    load_failures.append((name, str(error)))
            if not installed and not left_out:
                raise UsageError("no reward is installed; install one, e.g. pip install grpo-reward-length")
        rows, unfit = None, []
        if dataset:
            selected, rows, unfit = _dataset_rows(dataset, parse_key_values(dataset_args, "--dataset-arg"), selected,
                                                  every=not names and not environments, environments=environments)
    except UsageError as error:
        raise _BadInput(str(error)) from None

    hung_before = abandoned_calls()
    seed = random.randrange(2**32) if seed is None else seed
    report = CheckReport(seed=seed)
    if selected:
        progress = Progress(budget_s=budget)
        try:
            report = run_checks(selected, max_examples=max_examples, seed=seed, rows=rows,
                                budget_s=budget * len(selected), progress=progress,
                                max_completion_length=max_completion_length)
        finally:
            progress.close()
    for environment in environments:
        started = time.monotonic()
        report.params[environment.name] = dict(environment.params)
        report.results.extend(check_environment(environment, rows, seed, max_examples, call_timeout_s=tool_timeout))
        report.seconds += time.monotonic() - started
    for name, message in load_failures:
        report.results.insert(0, PropertyResult(name, "load", FAIL, f"the reward does not load with its defaults: {message}"))
    for name, reason in left_out:
        report.results.append(PropertyResult(name, "load", SKIP, f"checked only when named ({reason}): "
                                                                 f"grpo-run check --reward {name}"))
    for name, message in unfit:
        report.results.append(PropertyResult(name, "columns", SKIP, message))
    if as_json:
        click.echo(report.to_json())
    else:
        color = sys.stdout.isatty()
        click.echo(format_report(report, color=color, width=shutil.get_terminal_size((100, 24)).columns), nl=False)
    code = 0 if report.ok else 1
    if abandoned_calls() > hung_before:
        # A hung call still runs in a thread and may hold a lock that exit handlers wait for.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _environment_options(environments, env_args) -> tuple[list[str], dict[str, dict]]:
    """``--env NAME --env-arg NAME.KEY=VALUE`` -> (names, params), as ``train`` reads them."""
    given = flag_layer(environments=environments, env_args=env_args)
    return given.get("environments", []), given.get("env_args", {})


def _dataset_rows(name: str, params: dict, selected: list, every: bool,
                  environments: list = ()) -> tuple[list, list[dict], list]:
    """The rewards to check, the dataset's rows (as preflight reads them) and the rewards left out. Checking every
    installed reward, one that reads a column the dataset lacks is left out with why; a reward named with
    --reward is an error instead, as in training, and so is an environment whose columns the dataset lacks."""
    import datasets  # heavy: only when a dataset is checked

    datasets.disable_progress_bars()  # the report (and --json) owns the output
    data = load_dataset(name, params, rewards=None if every else selected)
    for environment in environments:
        missing = [column for column in environment.spec.columns if column not in data.column_names]
        if missing:
            raise UsageError(f"environment '{environment.name}' reads column '{missing[0]}', which dataset '{name}' "
                             f"lacks (it has {', '.join(data.column_names)})")
    if environments and not len(data):
        raise UsageError(f"dataset '{name}' has no rows to start episodes from")
    kept, unfit = [], []
    for reward in selected:
        try:
            validate_columns(data, [reward], name)
            kept.append(reward)
        except UsageError as error:
            unfit.append((reward.__name__, f"not checked on dataset '{name}': {error}"))
    return kept, dataset_rows(data), unfit
