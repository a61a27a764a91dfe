"""Hand a run to ``accelerate launch`` when it needs more than one process."""

from __future__ import annotations

import os
import sys

LAUNCHED_ENV = "GRPO_LAUNCHED"  # set in processes started by accelerate, so they train instead of relaunching


def is_launched() -> bool:
    return os.environ.get(LAUNCHED_ENV) == "1"


def launch_command(profile, num_processes: int | None, argv: list[str]) -> list[str] | None:
    """The ``accelerate launch`` command that re-runs ``grpo-run argv``, or None for one process.

    ``profile.launcher`` holds ``accelerate launch`` options (``num_processes``,
    ``config_file``, ...); ``num_processes`` from the command line overrides it.
    """
    options = dict(profile.launcher or {})
    if num_processes is not None:
        options["num_processes"] = num_processes
    processes = int(options.get("num_processes") or 1)
    if processes <= 1 and not options.get("config_file"):
        return None
    command = [sys.executable, "-m", "accelerate.commands.launch"]
    if not options.get("config_file"):
        # Several processes on one machine; with use_cpu the ranks talk over gloo.
        command += ["--multi_gpu", "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no"]
    for key, value in options.items():
        command += [f"--{key}", str(value)]
    return command + ["-m", "grpo_core", *argv, "--no-preflight"]


def run_launched(command: list[str]) -> int:
    import subprocess

    env = dict(os.environ, **{LAUNCHED_ENV: "1"})
    return subprocess.call(command, env=env)
