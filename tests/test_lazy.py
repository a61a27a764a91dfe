"""Discovery is cheap: help and listings never import the training stack or plugins' heavy dependencies (nor rich,
off a terminal or at one, nor importlib.metadata), and neither does a typo in a name or a setting, so it is reported
at once."""

import os
import pty
import subprocess
import sys
import tempfile

import pytest

HEAVY = {"torch", "transformers", "trl", "datasets", "peft", "accelerate", "sympy", "jsonschema", "math_verify", "hypothesis",
         "fastapi", "uvicorn", "starlette"}  # the last three: the serve extra, for grpo-run serve alone


def grpo_run(*args, env=None):
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "grpo_core", *args], capture_output=True,
                          text=True, timeout=120, env=env)


def imported(result) -> set:
    return {line.rsplit("|", 1)[1].strip().split(".")[0] for line in result.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


def imported_modules(*args):
    result = grpo_run(*args)
    assert result.returncode == 0, result.stderr[-2000:]
    return imported(result)


@pytest.mark.parametrize("args", [["--help"], ["plugins"], ["plugins", "--json"], ["rewards"], ["datasets"], ["profiles"]])
def test_listing_imports_nothing_heavy(args):
    modules = imported_modules(*args)
    assert "grpo_core" in modules  # the measurement itself works
    assert not modules & HEAVY, f"grpo-run {' '.join(args)} imported {sorted(modules & HEAVY)}"


@pytest.fixture
def field_cache(tmp_path, monkeypatch):
    """An environment whose cache holds GRPOConfig's field table, as after the first run on an install."""
    from grpo_core.settings import grpo_fields

    monkeypatch.setenv("GRPO_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(grpo_fields, "_TABLE", None)
    grpo_fields.field_table()  # reads TRL (in this process) and writes the table to the cache
    return dict(os.environ)


@pytest.mark.parametrize("args, message", [
    (["--reward", "mth"], "unknown reward 'mth'"),
    (["--reward", "math", "--dataset", "arithmetc"], "unknown dataset 'arithmetc'"),
    (["--reward", "math", "--dataset", "arithmetic", "--model", "smollm2-13m"], "unknown model 'smollm2-13m'"),
    (["--reward", "math", "--reward-arg", "math.extrct=answer-tag", "--dataset", "arithmetic"], "no parameter 'extrct'"),
    (["--set", "learning_rat=1e-5"], "'learning_rat' is not a GRPOConfig field"),
    (["--set", "max_steps=-5"], "'max_steps' (the number of training steps) must be at least 1"),
])
def test_a_typo_is_reported_before_anything_heavy_is_imported(field_cache, args, message):
    result = grpo_run(*args, env=field_cache)
    assert result.returncode == 2 and message in result.stderr, result.stderr[-2000:]
    modules = imported(result)
    assert "grpo_core" in modules and not modules & HEAVY, sorted(modules & HEAVY)


def imported_full(result) -> set:
    return {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


# What the help and the listings leave to the commands that need it: the property checks, the server, the training
# stack, the config-file layer (yaml) and the Ray backend's pool.
LEFT_TO_COMMANDS = ("grpo_core.checks", "grpo_core.serving.command", "grpo_core.training", "grpo_core.settings.layers",
                    "grpo_core.rewards.ray_pool", "yaml")


@pytest.mark.parametrize("args", [["--help"], ["plugins"], ["rewards"]])
def test_help_and_listings_leave_checks_server_and_training_to_their_commands(args):
    result = grpo_run(*args)
    assert result.returncode == 0, result.stderr[-2000:]
    modules = imported_full(result)
    assert "grpo_core.cli" in modules
    loaded = sorted(m for m in modules if m.split(".")[0] == "yaml" or m.startswith(LEFT_TO_COMMANDS))
    assert not loaded, f"grpo-run {' '.join(args)} imported {loaded}"
    if args == ["--help"]:
        assert "check " in result.stdout and "serve " in result.stdout


# A listing printed off a terminal leaves out rich (its table is drawn as plain text), importlib.metadata and the email
# parser (the entry points are read from the .dist-info folders) and multiprocessing (the reward worker pool's).
@pytest.mark.parametrize("args", [["--help"], ["plugins"], ["rewards"], ["datasets"], ["environments"], ["profiles"]])
def test_listings_off_a_terminal_import_neither_rich_nor_importlib_metadata(args):
    env = {key: value for key, value in os.environ.items() if key not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    result = grpo_run(*args, env=env)
    assert result.returncode == 0 and result.stdout.strip(), result.stderr[-2000:]
    modules = imported_full(result)
    assert "grpo_core.plugins" in modules
    loaded = sorted(m for m in modules if m.split(".")[0] in ("rich", "email", "multiprocessing")
                    or m.startswith("importlib.metadata"))
    assert not loaded, f"grpo-run {' '.join(args)} imported {loaded}"


def at_a_terminal(*args):
    """grpo-run run with its standard output a real terminal (a pseudo-terminal): what it printed there, and the
    modules it imported."""
    env = {key: value for key, value in os.environ.items() if key not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env.update(TERM="xterm-256color", COLUMNS="120")
    main, side = pty.openpty()
    # stderr (the import times, tens of KB) goes to a file: a pipe read only after the terminal closes could fill and
    # block grpo-run before it ends.
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "grpo_core", *args], stdout=side,
                                       stderr=errors, stdin=subprocess.DEVNULL, env=env)
            os.close(side)
            chunks = []
            while True:
                try:
                    chunk = os.read(main, 65536)
                except OSError:  # the terminal closed as grpo-run ended
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            status = process.wait(timeout=120)
        finally:
            os.close(main)
        errors.seek(0)
        stderr = errors.read().decode()
    assert status == 0, stderr[-2000:]
    return b"".join(chunks).decode(), imported_full(subprocess.CompletedProcess(args, 0, "", stderr))


@pytest.mark.parametrize("args", [["plugins"], ["rewards"], ["environments"]])
def test_listings_at_a_terminal_print_a_bold_header_without_importing_rich(args):
    shown, modules = at_a_terminal(*args)
    assert "grpo_core.plugins" in modules
    assert shown.startswith("\x1b[1m") and "\x1b[0m" in shown.splitlines()[0], shown[:200]
    assert not [m for m in modules if m.split(".")[0] == "rich"], "rich was imported at a terminal"


def test_a_command_listed_before_it_loads_shows_its_own_short_help():
    import click

    from grpo_core.cli import LAZY_COMMANDS, cli

    for name, summary in LAZY_COMMANDS.items():
        command = cli.get_command(click.Context(cli), name)
        assert command.callback is not None, f"{name}: the command itself, not its listing"
        listed = click.Command(name, help=summary)
        for limit in (30, 45, 80, 200):
            assert listed.get_short_help_str(limit) == command.get_short_help_str(limit), (name, limit)
