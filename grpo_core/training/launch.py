"""Hand a run to ``accelerate launch`` when it needs more than one process.

A profile's ``launcher`` holds ``accelerate launch`` options as data:

- ``accelerate_config``: the contents of an accelerate config file (DeepSpeed, FSDP, ...),
  written to a YAML file under the cache directory and passed as ``--config_file``; its
  ``num_processes`` is the ``--num-processes`` given, else one per visible GPU;
- ``reserve_gpus``: GPUs left out for something else (a vLLM server on the first ones);
- any other key: an ``accelerate launch`` option, e.g. ``{"num_processes": 4}``.

A profile describes one machine, so its process count is per machine. Where the run executes (``--num-machines``,
``--machine-rank``, ``--main-process-ip``, ``--main-process-port``, ``--accelerate-config``) is a ``Place``, handed
to accelerate under accelerate's own option names; ``--num-processes``, like accelerate's ``--num_processes``,
counts the processes of all machines together.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from grpo_core.cache import cache_dir
from grpo_core.errors import UsageError
from grpo_core.settings.layers import read_config_file

LAUNCHED_ENV = "GRPO_LAUNCHED"  # set in processes started by accelerate, so they train instead of relaunching
# The checkpoint the launching process checked for --resume, handed to the processes it starts.
CHECKPOINT_ENV = "GRPO_RESUME_CHECKPOINT"


def is_launched() -> bool:
    return os.environ.get(LAUNCHED_ENV) == "1"


def is_global_main() -> bool:
    """The process of global rank 0 (or one not launched): the one that writes the run folder's shared outputs."""
    return not is_launched() or os.environ.get("RANK", "0") == "0"


def handed_checkpoint() -> Path | None:
    """In a launched process: the checkpoint the launching process found and checked (None: start fresh)."""
    path = os.environ.get(CHECKPOINT_ENV)
    return Path(path) if path else None


@dataclass(frozen=True)
class Place:
    """Where a run executes: how many machines, the ``accelerate launch`` options the user gave for them (each under
    accelerate's own name), and the values of the user's own accelerate config file, if any."""

    machines: int = 1
    rank: int | None = None
    options: dict = field(default_factory=dict)
    file: dict = field(default_factory=dict)

    @property
    def main_machine(self) -> bool:
        """The machine of rank 0 (or the only one): its launcher claims the output folder and checks it."""
        return not self.rank


# The settings that say where a run executes, by the ``accelerate launch`` option each one is.
PLACE_OPTIONS = {"num_machines": "num_machines", "machine_rank": "machine_rank", "main_process_ip": "main_process_ip",
                 "main_process_port": "main_process_port", "accelerate_config": "config_file"}


def place_of(settings, num_processes: int | None = None) -> Place:
    """The run's ``Place`` once its settings fit together (a flag wins over the user's accelerate config file); a
    UsageError naming the flag to change otherwise. Cheap: nothing is loaded but that file."""
    file = read_accelerate_config(settings.accelerate_config) if settings.accelerate_config else {}
    options = {option: getattr(settings, name) for name, option in PLACE_OPTIONS.items()
               if getattr(settings, name) is not None}
    machines = int(options.get("num_machines") or file.get("num_machines") or 1)
    rank = options.get("machine_rank", file.get("machine_rank"))
    if settings.machine_rank is not None and machines == 1:
        raise UsageError(f"--machine-rank {settings.machine_rank} needs --num-machines above 1 (the machines that "
                         "train together); remove it to train on this machine alone")
    if machines > 1 and rank is None:
        raise UsageError(f"--num-machines {machines} needs --machine-rank on each machine: 0 on the machine at "
                         f"--main-process-ip, 1 to {machines - 1} on the others")
    if rank is not None and not 0 <= int(rank) < machines:
        raise UsageError(f"--machine-rank {rank} is out of range for --num-machines {machines}; give each machine "
                         f"its own rank from 0 to {machines - 1}")
    if machines > 1 and not options.get("main_process_ip", file.get("main_process_ip")):
        raise UsageError(f"--num-machines {machines} needs --main-process-ip, the address of the machine of rank 0 "
                         "that every machine can reach")
    if num_processes is not None and num_processes % machines:
        raise UsageError(f"--num-processes {num_processes} counts the processes of all {machines} machines together "
                         f"and does not split evenly over them; give a multiple of {machines}, e.g. "
                         f"{machines * max(1, num_processes // machines)}")
    return Place(machines, None if rank is None else int(rank), options, file)


def read_accelerate_config(path: str) -> dict:
    """The mapping in a user's accelerate config file, or a UsageError saying what is wrong with it."""
    try:
        return read_config_file(path)
    except UsageError as error:
        raise UsageError(f"--accelerate-config: {error}; give a file `accelerate config` wrote") from None


def process_total(profile, num_processes: int | None, place: Place = Place()) -> int:
    """The training processes of all machines together: ``--num-processes``, else the user's accelerate config's,
    else the profile's count on each machine (one per visible GPU for an accelerate config, or one) times the
    machines."""
    if num_processes is not None:
        return num_processes
    if place.options.get("config_file"):
        return int(place.file.get("num_processes") or place.machines)
    options = profile.launcher or {}
    if options.get("num_processes"):
        return int(options["num_processes"]) * place.machines
    if options.get("accelerate_config") is not None:
        return max(1, gpu_count() - int(options.get("reserve_gpus") or 0)) * place.machines
    return place.machines


def launch_command(profile, num_processes: int | None, argv: list[str], place: Place = Place()) -> list[str] | None:
    """The ``accelerate launch`` command that re-runs ``grpo-run argv``, or None for one process on one machine.

    ``num_processes`` (all machines together, as accelerate counts) from the command line overrides the profile's;
    a user's accelerate config file replaces the profile's launcher.
    """
    total = process_total(profile, num_processes, place)
    given = {key: value for key, value in place.options.items() if key != "num_machines"}
    if given.get("config_file"):
        options = {**({"num_processes": num_processes} if num_processes is not None else {}), **given}
        if place.machines > 1:
            options["num_machines"] = place.machines
        return _accelerate(options, argv)
    options = dict(profile.launcher or {})
    accelerate_config = options.pop("accelerate_config", None)
    reserve = int(options.pop("reserve_gpus", 0) or 0)
    options.pop("num_processes", None)
    if accelerate_config is not None:  # the count goes in the file
        config = accelerate_file_config(accelerate_config, total, reserve, place.machines)
        options["config_file"] = str(write_accelerate_config(config, profile.name))
        if place.machines > 1:
            options["num_machines"] = place.machines
    elif total <= 1 and place.machines <= 1:
        return None
    else:
        options["num_processes"] = total
    options.update(given)
    if options.get("config_file"):
        return _accelerate(options, argv)
    # Several processes without a config file; with use_cpu the ranks talk over gloo.
    prefix = ["--multi_gpu", "--num_machines", str(place.machines), "--mixed_precision", "no", "--dynamo_backend", "no"]
    return _accelerate(options, argv, prefix)


def _accelerate(options: dict, argv: list[str], prefix: list[str] = ()) -> list[str]:
    command = [sys.executable, "-m", "accelerate.commands.launch", *prefix]
    for key, value in options.items():
        command += [f"--{key}", str(value)]
    return command + ["-m", "grpo_core", *argv, "--no-preflight"]


def accelerate_file_config(base: dict, num_processes: int, reserve_gpus: int = 0, machines: int = 1) -> dict:
    """``base`` with the process count (all machines), and each machine's GPU ids after the ``reserve_gpus`` first."""
    config = {**base, "num_processes": num_processes}
    if reserve_gpus:
        per_machine = num_processes // machines
        config["gpu_ids"] = ",".join(str(i) for i in range(reserve_gpus, reserve_gpus + per_machine))
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
