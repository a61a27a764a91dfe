"""The ``grpo-run`` command. Imports here stay light: help and listings never load torch or TRL."""

from __future__ import annotations

import json
import os
import sys

import click
from click_default_group import DefaultGroup

from grpo_core.builtin.profiles import describe_profile
from grpo_core.errors import GrpoError, PluginError, UsageError
from grpo_core.plugins import get_registry, listing
from grpo_core.settings.declared import DEFAULT_TOOL_TIMEOUT_S, DEFAULT_TOOL_TURNS, option, training_options


class CommandError(click.ClickException):
    """A grpo-core error shown as one line, ``Error: ...``, with the given exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


# Built-in commands whose modules load when the command is used; the group's help lists each by the first paragraph
# of its help, given here (tests/test_lazy.py holds it to the command's own).
LAZY_COMMANDS = {
    "check": "Check rewards with property-based tests before training with them.",
    "serve": "Serve installed rewards over HTTP: POST /rewards/NAME, OpenRLHF's POST /get_reward, GET /rewards, GET "
             "/health.",
}


def _load_command(name: str) -> click.Command:
    if name == "check":
        from grpo_core.checks.command import check

        return check
    from grpo_core.serving.command import serve

    return serve


class GrpoGroup(DefaultGroup):
    """The ``grpo-run`` group: ``train`` when no command is named, plugin commands attached on first use,
    errors shown as one line."""

    _attached = False
    _listing = False

    def _attach(self) -> None:
        if not GrpoGroup._attached:
            GrpoGroup._attached = True
            for name, summary in LAZY_COMMANDS.items():
                self.add_command(click.Command(name, help=summary))
            get_registry().add_commands(self)

    def list_commands(self, ctx):
        self._attach()
        return super().list_commands(ctx)

    def get_command(self, ctx, name):
        self._attach()
        command = super().get_command(ctx, name)
        if name in LAZY_COMMANDS and command is not None and command.callback is None and not self._listing:
            command = _load_command(name)
            self.add_command(command)
        return command

    def format_commands(self, ctx, formatter):
        self._listing = True  # the list needs only names and short help: a lazy command's module stays unloaded
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._listing = False

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except UsageError as error:  # bad input: exit 2, before anything heavy is loaded
            raise CommandError(str(error), 2) from None
        except GrpoError as error:
            raise CommandError(str(error), 1) from None
        except KeyboardInterrupt:  # Ctrl-C before training started, or a second one during it
            raise CommandError("interrupted (Ctrl-C); outputs written so far are kept", 130) from None


# DefaultGroup (as llm uses it) makes `grpo-run --reward math` mean `grpo-run train --reward math`,
# while options belong to the command that uses them.
@click.group(cls=GrpoGroup, default="train", default_if_no_args=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="grpo-core", prog_name="grpo-run")
def cli():
    """Train a model with GRPO using installed reward plugins.

    \b
    grpo-run                  # the default run: SmolLM2 learns arithmetic, on a CPU
    grpo-run --reward math --reward xml-format --dataset arithmetic --model smollm2-135m
    grpo-run --reward math=2.0 --reward length --reward-arg length.target=300 ...
    grpo-run plugins          # what is installed
    grpo-run rewards          # every reward with its bounds, columns and parameters

    With no command, or with training options first, grpo-run runs `train`.
    """


@cli.command(context_settings={"help_option_names": ["-h", "--help"]})
@training_options
def train(**options):
    """Train with GRPO (the default command): the built-in default run, changed field by field by
    --profile, --config and the flags below."""
    from grpo_core.training import collector
    from grpo_core.training.runner import run_from_options

    collector.skip_at_exit()
    run_from_options(argv=sys.argv[1:], **options)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def plugins(as_json):
    """List installed plugin distributions, their versions and what they register."""
    registry = get_registry()
    rows = [
        {
            "name": info.name,
            "distribution": info.distribution,
            "version": info.version,
            "registers": {kind: names for kind, names in info.registers.items() if names},
            **({"error": info.error} if info.error else {}),
            **({"warnings": info.warnings} if info.warnings else {}),
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
    cells = []
    for row in rows:
        registers = "; ".join(f"{kind}: {', '.join(names)}" for kind, names in row["registers"].items())
        cells.append([row["name"], row["distribution"], row["version"],
                      row.get("error") and f"FAILED: {row['error']}" or registers])
    _print_table(["plugin", "distribution", "version", "registers"], cells)
    for row in rows:
        for warning in row.get("warnings", ()):
            click.echo(f"warning: {warning}", err=True)
    for (kind, name), owners in sorted(clashes.items()):
        click.echo(f"warning: {kind[:-1]} '{name}' is registered by both {' and '.join(owners)}; using it is an "
                   f"error until one is uninstalled or blocked with GRPO_DISABLE_PLUGINS", err=True)


@cli.command()
@click.option("--model", "models", multiple=True, required=True,
              help="Model alias, folder or hub id, or a run's output folder (its final model, scored on its dataset "
              "with its rewards unless given here); repeat to compare.")
@option("dataset", help="Dataset name (see `grpo-run datasets`); default: the run's, when a --model is a run's folder.")
@option("dataset_args", help="A dataset parameter, e.g. path=data.jsonl (over the run's, for the run's dataset).")
@option("rewards", help="A reward to score with, NAME or NAME=WEIGHT; repeat for several (default: the run's).")
@option("reward_args", help="A reward parameter, e.g. length.target=300.")
@click.option("-n", "n", type=click.IntRange(min=1), default=50, show_default=True,
              help="Held-out prompts: test-split questions not in the training split, else the dataset's last rows.")
@click.option("--max-new-tokens", type=click.IntRange(min=1),
              help="Tokens each completion may have  [default: a run folder's max_completion_length, else 64]")
@click.option("--temperature", type=click.FloatRange(min=0), default=0.0, show_default=True, help="0 is greedy.")
@click.option("--top-k", type=click.IntRange(min=0), default=0, show_default=True,
              help="With a temperature: sample from the K likeliest tokens, as a run's top_k does (0: from all of "
              "them, TRL's default).")
@click.option("--output", type=click.Path(dir_okay=False), help="Write the samples and their scores as JSON lines.")
@click.option("--json", "as_json", is_flag=True, help="Print the means as JSON.")
@option("environments", help="An environment whose tools the model may call in each episode (see `grpo-run "
        "environments`), NAME or FILE.py:CLASS; its reward scores the episode too.")
@option("env_args", help="An environment parameter, e.g. calculator.max_calls=4.")
@option("chat_template")
@option("tool_timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_TOOL_TIMEOUT_S, show_default=True,
        help="Seconds a tool call may take; a call past it is answered with an error.")
@click.option("--tool-turns", type=click.IntRange(min=1), default=DEFAULT_TOOL_TURNS, show_default=True,
              help="Tool-calling turns an episode may make (max_tool_calling_iterations in training).")
def sample(models, dataset, dataset_args, rewards, reward_args, n, max_new_tokens, temperature, top_k, output, as_json,
           environments, env_args, chat_template, tool_timeout, tool_turns):
    """Generate on held-out prompts and print each reward's mean, e.g. base model against trained model. Given a run's
    folder (--model runs/demo), it scores the run's final model on the run's dataset with its rewards, the prompts
    the run's comparison uses, unless told otherwise here. With --env,
    each completion is an episode in which the model may call the environment's tools (--output holds its messages,
    tool calls and answers included)."""
    from grpo_core.training.runner import sample_models
    from grpo_core.training.sample import format_comparison

    results = sample_models(models, dataset, dataset_args, rewards, reward_args, n, max_new_tokens, temperature, output,
                            environments, env_args, chat_template, tool_timeout, tool_turns, top_k=top_k)
    if as_json:
        click.echo(json.dumps([{"model": r["model"], "n": r["n"], "means": r["means"],
                                **({"tool_share": r["tool_share"]} if "tool_share" in r else {})} for r in results],
                              indent=2))
    else:
        click.echo(format_comparison(results))


def _show_listing(kind: str, as_json: bool, names=()) -> None:
    rows = listing.named_rewards(list(names)) if names else listing.rows(kind)
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    _print_table(list(rows[0]) if rows else ["name"], [[listing.cell(value) for value in row.values()] for row in rows])


def _listing(kind: str):
    @click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
    def command(as_json):
        _show_listing(kind, as_json)

    command.__doc__ = f"List installed {kind} with their descriptions and parameters."
    return cli.command(name=kind)(command)


for _kind in ("datasets", "environments", "models"):
    _listing(_kind)


@cli.command()
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def rewards(names, as_json):
    """List installed rewards with their descriptions and parameters.

    Given NAMEs (installed, FILE.py:FUNCTION or package.module:FUNCTION), lists those rewards, each with the
    signature it was read as (grpo-core, TRL keyword, TRL factory, verl compute_score, OpenRLHF reward_func, verifiers
    rubric; "(declared)" when its .signature says so)."""
    _show_listing("rewards", as_json, names)


@cli.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def profiles(ctx, as_json):
    """List installed hardware profiles; `grpo-run profiles show NAME` shows one in full."""
    if ctx.invoked_subcommand is None:
        _show_listing("profiles", as_json)


@profiles.command("show")
@click.argument("name")
def show_profile(name):
    """Show one hardware profile in full: GRPOConfig fields, LoRA and launcher.

    For a profile that picks another (auto, gpu), shows the pick on this machine and why.
    """
    click.echo(json.dumps(describe_profile(name), indent=2, default=str))


def _print_table(columns: list[str], rows: list[list[str]]) -> None:
    """A listing's table, at least 100 columns wide. Plain text off a terminal and with a bold header at one, drawn
    without rich (whose import takes longer than finding the listing); where rich would draw anything else (markup,
    colour forced, a notebook, Windows' console), rich draws it."""
    width = max(100, _terminal_width())
    output = _output_kind()
    text = listing.plain_table(columns, rows, width, bold_header=output == "terminal") if output else None
    if text is not None:
        click.echo(text, nl=False, color=output == "terminal")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    Console(soft_wrap=False, width=width).print(table)


def _output_kind() -> str | None:
    """How rich would print to standard output: "plain" (not a terminal, or a dumb one: no styles), "terminal" (a
    POSIX terminal: ANSI styles), or None where only rich can say (FORCE_COLOR or TTY_COMPATIBLE set, a notebook,
    IDLE, Windows, an output rich already wraps)."""
    if os.environ.keys() & {"FORCE_COLOR", "TTY_COMPATIBLE"} or "IPython" in sys.modules or "idlelib" in sys.modules:
        return None
    stdout = sys.stdout
    if stdout is None or hasattr(stdout, "rich_proxied_file"):
        return None
    try:
        terminal = stdout.isatty()
    except (AttributeError, ValueError):
        return None
    if not terminal or os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return "plain"
    return "terminal" if os.name == "posix" else None


def _terminal_width() -> int:
    import shutil

    return shutil.get_terminal_size((120, 24)).columns


def main() -> None:
    """Entry point of ``grpo-run``."""
    try:
        cli(prog_name="grpo-run")
    except (PluginError, GrpoError) as error:  # raised while attaching plugin commands
        click.echo(f"Error: {error}", err=True)
        sys.exit(2 if isinstance(error, UsageError) else 1)
