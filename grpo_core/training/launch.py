"""Hand a run to ``accelerate launch`` when it needs more than one process.

A profile's ``launcher`` holds ``accelerate launch`` options as data:

- ``accelerate_config``: the contents of an accelerate config file (DeepSpeed, FSDP, ...),
  written to a YAML file under the cache directory and passed as ``--config_file``; its
  ``num_processes`` is the ``--num-processes`` given, else one per visible GPU;
- ``reserve_gpus``: GPUs left out for something else (a vLLM server on the first ones);
- any other key: an ``accelerate launch`` option, e.g. ``{"num_processes": 4}``.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from grpo_core.builtin.models import cache_dir

LAUNCHED_ENV = "GRPO_LAUNCHED"  # set in processes started by accelerate, so they train instead of relaunching
# The checkpoint the launching process checked for --resume, handed to the processes it starts.
CHECKPOINT_ENV = "GRPO_RESUME_CHECKPOINT"


def is_launched() -> bool:
    return os.environ.get(LAUNCHED_ENV) == "1"


def handed_checkpoint() -> Path | None:
    """In a launched process: the checkpoint the launching process found and checked (None: start fresh)."""
    path = os.environ.get(CHECKPOINT_ENV)
    return Path(path) if path else None


def launch_command(profile, num_processes: int | None, argv: list[str]) -> list[str] | None:
    """The ``accelerate launch`` command that re-runs ``grpo-run argv``, or None for one process.

    ``num_processes`` from the command line overrides the profile's.
    """
    options = dict(profile.launcher or {})
    accelerate_config = options.pop("accelerate_config", None)
    reserve = int(options.pop("reserve_gpus", 0) or 0)
    if num_processes is not None:
        options["num_processes"] = num_processes
    if accelerate_config is not None:
        processes = int(options.pop("num_processes", None) or max(1, gpu_count() - reserve))
        config = accelerate_file_config(accelerate_config, processes, reserve)
        options["config_file"] = str(write_accelerate_config(config, profile.name))
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


def accelerate_file_config(base: dict, num_processes: int, reserve_gpus: int = 0) -> dict:
    """``base`` with the process count, and the GPU ids after the ``reserve_gpus`` first ones."""
    config = {**base, "num_processes": num_processes}
    if reserve_gpus:
        config["gpu_ids"] = ",".join(str(i) for i in range(reserve_gpus, reserve_gpus + num_processes))
    return config


def write_accelerate_config(config: dict, name: str) -> Path:
    """Write ``config`` as YAML under the cache directory; the file is named by its content, so reruns reuse it."""
    import yaml

    text = yaml.safe_dump(config, sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = cache_dir() / "accelerate" / f"{name}-{digest}.yaml"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        partial.write_text(text)
        partial.replace(path)
    return path


def gpu_count() -> int:
    """CUDA devices visible to this process (0 without CUDA)."""
    import torch

    return torch.cuda.device_count()


def run_launched(command: list[str], checkpoint: Path | None = None) -> int:
    """Run the launched processes, telling them they were launched and which checkpoint (if any) they resume."""
    import subprocess

    env = {key: value for key, value in os.environ.items() if key != CHECKPOINT_ENV}
    env[LAUNCHED_ENV] = "1"
    if checkpoint is not None:
        env[CHECKPOINT_ENV] = str(checkpoint)
    return subprocess.call(command, env=env)
