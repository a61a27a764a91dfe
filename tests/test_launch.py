"""Scale-out through accelerate launch: generated config files accelerate accepts, and a real 2-process run."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grpo_core.training import launch
from grpo_core.plugins import get_registry

TRL_TEMPLATES = Path(__import__("trl").__file__).parent / "accelerate_configs"


def command_for(profile_name, monkeypatch, gpus=4, num_processes=None):
    monkeypatch.setattr(launch, "gpu_count", lambda: gpus)
    return launch.launch_command(get_registry().profile(profile_name), num_processes, ["--model", "m", "--dry-run"])


def accelerate_view(command):
    """What ``accelerate launch`` makes of ``command``: its parsed, validated arguments and the child environment."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils import prepare_deepspeed_cmd_env, prepare_multi_gpu_env

    assert command[1:3] == ["-m", "accelerate.commands.launch"]
    args, defaults, mixed_precision_from_config = _validate_launch_command(launch_command_parser().parse_args(command[3:]))
    if args.use_deepspeed:
        # as accelerate's launch_command does before handing over to DeepSpeed
        fields = list(defaults.deepspeed_config) + (["mixed_precision"] if mixed_precision_from_config else [])
        args.deepspeed_fields_from_accelerate_config = ",".join(fields)
        _, env = prepare_deepspeed_cmd_env(args)
    else:
        env = prepare_multi_gpu_env(args)
    return args, env


def config_file(command):
    return Path(command[command.index("--config_file") + 1])


def test_one_process_needs_no_launcher(monkeypatch):
    assert command_for("cpu", monkeypatch) is None
    assert command_for("gpu-24gb", monkeypatch, num_processes=1) is None


def test_cpu_processes_run_as_gloo_ranks(monkeypatch):
    command = command_for("cpu", monkeypatch, num_processes=2)
    args, env = accelerate_view(command)
    assert args.multi_gpu and args.num_processes == 2 and not args.cpu  # --cpu would silently run one process
    assert args.module and args.training_script == "grpo_core"
    assert args.training_script_args == ["--model", "m", "--dry-run", "--no-preflight"]


@pytest.mark.parametrize(
    "profile, template, changed",
    [
        ("multi-gpu", "zero2.yaml", {"num_processes"}),
        ("multi-gpu-zero3", "zero3.yaml", {"num_processes"}),
        ("multi-gpu-fsdp", "fsdp2.yaml", {"num_processes", "fsdp_config.fsdp_activation_checkpointing"}),
        ("multi-gpu-vllm", "zero2.yaml", {"num_processes", "gpu_ids"}),
    ],
)
def test_generated_config_follows_trls_template(monkeypatch, cache_dir, profile, template, changed):
    command = command_for(profile, monkeypatch)
    path = config_file(command)
    assert path.is_file() and path.parent == cache_dir / "accelerate"
    generated = flatten(yaml.safe_load(path.read_text()))
    expected = flatten(yaml.safe_load((TRL_TEMPLATES / template).read_text()))
    differing = {key for key in expected.keys() | generated.keys() if generated.get(key) != expected.get(key)}
    assert differing == changed
    from accelerate.commands.config.config_args import load_config_from_file

    assert load_config_from_file(str(path)).num_processes == generated["num_processes"]  # no unknown keys


def flatten(config, prefix=""):
    flat = {}
    for key, value in config.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[prefix + key] = value
    return flat


@pytest.mark.parametrize("profile, stage", [("multi-gpu", "2"), ("multi-gpu-zero3", "3")])
def test_deepspeed_profiles_launch_one_rank_per_gpu_with_zero(monkeypatch, profile, stage):
    args, env = accelerate_view(command_for(profile, monkeypatch, gpus=8))
    assert args.use_deepspeed and args.num_processes == 8 and args.mixed_precision == "bf16"
    assert env["ACCELERATE_USE_DEEPSPEED"] == "true" and env["ACCELERATE_DEEPSPEED_ZERO_STAGE"] == stage
    assert env["ACCELERATE_DEEPSPEED_ZERO3_INIT"] == ("true" if stage == "3" else "false")


def test_fsdp_profile_launches_fsdp2_with_activation_checkpointing(monkeypatch):
    args, env = accelerate_view(command_for("multi-gpu-fsdp", monkeypatch, gpus=2))
    assert args.use_fsdp and args.num_processes == 2
    assert env["ACCELERATE_USE_FSDP"] == "true" and env["FSDP_VERSION"] == "2"
    assert env["FSDP_ACTIVATION_CHECKPOINTING"] == "true"
    # checkpointing is FSDP's job here; the trainer's own would add an all-gather per layer
    assert get_registry().profile("multi-gpu-fsdp").grpo_config["gradient_checkpointing"] is False


def test_vllm_server_profile_leaves_the_first_gpu_to_the_server(monkeypatch):
    args, env = accelerate_view(command_for("multi-gpu-vllm", monkeypatch, gpus=4))
    assert args.num_processes == 3 and args.gpu_ids == "1,2,3"


def test_num_processes_overrides_the_gpu_count(monkeypatch):
    args, _ = accelerate_view(command_for("multi-gpu", monkeypatch, gpus=8, num_processes=2))
    assert args.num_processes == 2


def test_config_file_is_named_by_content_and_reused(monkeypatch):
    first = config_file(command_for("multi-gpu", monkeypatch, gpus=4))
    again = config_file(command_for("multi-gpu", monkeypatch, gpus=4))
    other = config_file(command_for("multi-gpu", monkeypatch, gpus=2))
    assert first == again and first != other
    assert [p.name for p in first.parent.iterdir() if p.suffix == ".tmp"] == []


def test_dry_run_prints_the_accelerate_command(monkeypatch, data_file, cache_dir):
    from click.testing import CliRunner

    from grpo_core.cli import cli

    monkeypatch.setattr(launch, "gpu_count", lambda: 4)
    result = CliRunner().invoke(cli, [
        "--reward", "length", "--dataset", "local", "--dataset-arg", f"path={data_file}", "--model", "tiny-random",
        "--profile", "multi-gpu-zero3", "--dry-run", "--no-preflight",
    ])
    assert result.exit_code == 0, result.output
    resolved = json.loads(result.stdout)
    command = resolved["launch"]
    assert command[2] == "accelerate.commands.launch" and "--dry-run" not in command
    assert yaml.safe_load(config_file(command).read_text())["deepspeed_config"]["zero_stage"] == 3


@pytest.mark.slow
def test_two_cpu_processes_train_as_one_world(tmp_path, data_file, cache_dir):
    """grpo-run --num-processes 2 trains the tiny model in two gloo ranks of one run."""
    script = shutil.which("grpo-run", path=os.path.dirname(sys.executable))
    assert script, "the grpo-run console script is not installed next to this Python"
    out = tmp_path / "out"
    rows, max_steps, per_device, group = 8, 2, 2, 2
    result = subprocess.run(
        [script, "--reward", "length", "--dataset", "local", "--dataset-arg", f"path={data_file}",
         "--model", "tiny-random", "--profile", "cpu", "--num-processes", "2", "--max-steps", str(max_steps),
         "--output-dir", str(out), "--no-preflight", "--set", f"num_generations={group}",
         "--set", f"per_device_train_batch_size={per_device}", "--set", "max_completion_length=8"],
        capture_output=True, text=True, timeout=900,
        env=dict(os.environ, HF_HUB_OFFLINE="1", GRPO_CACHE_DIR=str(cache_dir)),
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-4000:]
    assert "accelerate.commands.launch --multi_gpu" in log
    # the launcher resolves the run once, then each rank does; only world rank 0 saves
    assert log.count("profile: cpu (selected)") == 3, log[-4000:]
    assert log.count("final model saved to") == 1
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [m for m in metrics if "rewards/length/mean" in m]
    assert [m["step"] for m in steps] == [1, 2]
    # each step consumes world_size * per_device / group prompts; one process would reach half this epoch
    world_size = 2
    assert steps[-1]["epoch"] == pytest.approx(max_steps * world_size * per_device / group / rows)
    assert (out / "final" / "config.json").is_file()
