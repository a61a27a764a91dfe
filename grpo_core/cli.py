"""The ``grpo-run`` command. Imports here stay light: help and listings never load torch or TRL."""

from __future__ import annotations

import json
import sys

import click

from grpo_core.errors import GrpoError, PluginError, UsageError


class CommandError(click.ClickException):
    """A grpo-core error shown as one line, ``Error: ...``, with the given exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class GrpoGroup(click.Group):
    """The ``grpo-run`` group: plugin commands attached on first use, errors shown as one line."""

    _attached = False

    def _attach(self) -> None:
        if not GrpoGroup._attached:
            GrpoGroup._attached = True
            from grpo_core.check_command import check
            from grpo_core.plugins import get_registry

            self.add_command(check)
            get_registry().add_commands(self)

    def list_commands(self, ctx):
        self._attach()
        return super().list_commands(ctx)

    def get_command(self, ctx, name):
        self._attach()
        return super().get_command(ctx, name)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except UsageError as error:  # bad input: exit 2, before anything heavy is loaded
            raise CommandError(str(error), 2) from None
        except GrpoError as error:
            raise CommandError(str(error), 1) from None
        except KeyboardInterrupt:  # Ctrl-C before training started, or a second one during it
            raise CommandError("interrupted (Ctrl-C); outputs written so far are kept", 130) from None


@click.group(cls=GrpoGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--reward", "rewards", multiple=True, metavar="NAME[=WEIGHT]", help="A reward to train with; repeat for several.")
@click.option("--reward-arg", "reward_args", multiple=True, metavar="NAME.KEY=VALUE", help="A reward parameter, e.g. length.target=300.")
@click.option("--dataset", help="Dataset name (see `grpo-run datasets`).")
@click.option("--dataset-arg", "dataset_args", multiple=True, metavar="KEY=VALUE", help="A dataset parameter, e.g. path=data.jsonl.")
@click.option("--model", help="Model alias (see `grpo-run models`), local folder or hub id.")
@click.option("--profile", help="Hardware profile (see `grpo-run profiles`); default: auto.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="YAML file of GRPOConfig fields plus rewards, dataset, model, profile.")
@click.option("--max-steps", type=int, help="Number of training steps (GRPOConfig.max_steps).")
@click.option("--output-dir", help="Where checkpoints, metrics and the final model go.")
@click.option("--set", "overrides", multiple=True, metavar="FIELD=VALUE", help="Set any GRPOConfig field, e.g. learning_rate=1e-5.")
@click.option("--resume", is_flag=True, default=None, help="Continue the run in --output-dir from its last checkpoint (checked to be the same run).")
@click.option("--overwrite", is_flag=True, help="Replace the outputs of an earlier run in --output-dir (only what a run writes there).")
@click.option("--merge-lora", is_flag=True, default=None, help="With a LoRA profile, also write the merged model to OUTPUT_DIR/merged.")
@click.option("--no-preflight", is_flag=True, help="Skip the quick property checks of the rewards before training.")
@click.option("--num-processes", type=click.IntRange(min=1), help="Train in N processes through `accelerate launch`.")
@click.option("--dry-run", is_flag=True, help="Print the resolved run as JSON and exit; loads no model or dataset, runs no checks, uses no network.")
@click.version_option(package_name="grpo-core", prog_name="grpo-run")
@click.pass_context
def cli(ctx, **options):
    """Train a model with GRPO using installed reward plugins.

    \b
    grpo-run --reward math --reward xml-format --dataset arithmetic --model smollm2-135m
    grpo-run --reward math=2.0 --reward length --reward-arg length.target=300 ...
    grpo-run plugins          # what is installed
    grpo-run rewards          # every reward with its bounds, columns and parameters
    """
    if ctx.invoked_subcommand is not None:
        return
    from grpo_core.runner import run_from_options

    run_from_options(argv=sys.argv[1:], **options)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def plugins(as_json):
    """List installed plugin distributions, their versions and what they register."""
    from grpo_core.plugins import get_registry

    registry = get_registry()
    rows = [
        {
            "name": info.name,
            "distribution": info.distribution,
            "version": info.version,
            "registers": {kind: names for kind, names in info.registers.items() if names},
            **({"error": info.error} if info.error else {}),
        }
        for info in registry.plugins
    ]
    clashes = {(kind, name): owners for kind, names in registry.duplicates.items() for name, owners in names.items()}
    for row in rows:
        mine = [f"{kind[:-1]} '{name}'" for (kind, name), owners in sorted(clashes.items()) if row["distribution"] in owners]
        if mine:
            row["clashes"] = mine
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    table = _table("plugin", "distribution", "version", "registers")
    for row in rows:
        registers = "; ".join(f"{kind}: {', '.join(names)}" for kind, names in row["registers"].items())
        table.add_row(row["name"], row["distribution"], row["version"], row.get("error") and f"FAILED: {row['error']}" or registers)
    _print(table)
    for (kind, name), owners in sorted(clashes.items()):
        click.echo(f"warning: {kind[:-1]} '{name}' is registered by both {' and '.join(owners)}; using it is an "
                   f"error until one is uninstalled or blocked with GRPO_DISABLE_PLUGINS", err=True)


@cli.command()
@click.option("--model", "models", multiple=True, required=True, help="Model alias, folder or hub id; repeat to compare.")
@click.option("--dataset", required=True, help="Dataset name.")
@click.option("--dataset-arg", "dataset_args", multiple=True, metavar="KEY=VALUE", help="A dataset parameter.")
@click.option("--reward", "rewards", multiple=True, required=True, metavar="NAME", help="A reward to score with.")
@click.option("--reward-arg", "reward_args", multiple=True, metavar="NAME.KEY=VALUE", help="A reward parameter.")
@click.option("-n", "n", type=click.IntRange(min=1), default=50, show_default=True, help="Held-out prompts (the dataset's last rows).")
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=64, show_default=True)
@click.option("--temperature", type=click.FloatRange(min=0), default=0.0, show_default=True, help="0 is greedy.")
@click.option("--output", type=click.Path(dir_okay=False), help="Write the samples and their scores as JSON lines.")
@click.option("--json", "as_json", is_flag=True, help="Print the means as JSON.")
def sample(models, dataset, dataset_args, rewards, reward_args, n, max_new_tokens, temperature, output, as_json):
    """Generate on held-out prompts and print each reward's mean, e.g. base model against trained model."""
    from grpo_core.runner import sample_models

    results = sample_models(models, dataset, dataset_args, rewards, reward_args, n, max_new_tokens, temperature, output)
    if as_json:
        click.echo(json.dumps([{"model": r["model"], "n": r["n"], "means": r["means"]} for r in results], indent=2))
    else:
        from grpo_core.sample import format_comparison

        click.echo(format_comparison(results))


def _listing(kind: str):
    @click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
    def command(as_json):
        from grpo_core import listing

        rows = listing.rows(kind)
        if as_json:
            click.echo(json.dumps(rows, indent=2, default=str))
            return
        table = _table(*rows[0].keys()) if rows else _table("name")
        for row in rows:
            table.add_row(*(listing.cell(value) for value in row.values()))
        _print(table)

    command.__doc__ = f"List installed {kind} with their descriptions and parameters."
    return cli.command(name=kind)(command)


for _kind in ("rewards", "datasets", "profiles", "models"):
    _listing(_kind)


def _table(*columns):
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _print(renderable) -> None:
    from rich.console import Console

    Console(soft_wrap=False, width=max(100, _terminal_width())).print(renderable)


def _terminal_width() -> int:
    import shutil

    return shutil.get_terminal_size((120, 24)).columns


def main() -> None:
    """Entry point of ``grpo-run``."""
    try:
        cli(prog_name="grpo-run")
    except (PluginError, GrpoError) as error:  # raised while attaching plugin commands
        click.echo(f"Error: {error}", err=True)
        sys.exit(1)
