"""Training across machines: the flags reach accelerate unchanged in meaning, bad combinations end in one line and exit
2 before anything loads, only machine 0 claims the output folder, and two launchers on this machine train one run."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grpo_core.plugins import get_registry
from grpo_core.testing import free_port
from grpo_core.rundir import record
from grpo_core.settings.declared import BY_NAME, FILE_KEYS
from grpo_core.training import launch, runner
from grpo_core.training.resolve import resolve
from grpo_core.settings.layers import settings_from_options

from cli_helpers import folder_hash, invoke
from test_launch import accelerate_view, config_file

MACHINES = ("--num-machines", "2", "--main-process-ip", "10.0.0.1", "--main-process-port", "29600")


def run_args(data_file, out, *extra):
    return ["--reward", "length", "--dataset", "local", "--dataset-arg", f"path={data_file}", "--model", "tiny-random",
            "--profile", "cpu", "--output-dir", out, "--no-preflight", "--set", "num_generations=2", "--set",
            "per_device_train_batch_size=2", "--max-steps", "2", *extra]


def resolved(data_file, tmp_path, **options):
    settings = settings_from_options(rewards=("length",), dataset="local", dataset_args=(f"path={data_file}",),
                                     model="tiny-random", profile="cpu", output_dir=str(tmp_path / "out"), **options)
    return resolve(settings, log=lambda m: None, load_dataset=False, num_processes=options.get("num_processes"))


def test_the_machine_settings_are_config_keys_that_a_run_does_not_record(data_file, tmp_path):
    place = ("num_machines", "machine_rank", "main_process_ip", "main_process_port", "accelerate_config")
    assert all(BY_NAME[name].kind == "place" and name in FILE_KEYS for name in place)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"num_machines": 2, "main_process_ip": "10.0.0.1", "main_process_port": 29600}))
    run = resolved(data_file, tmp_path, config_file=str(path), machine_rank=1)
    assert (run.place.machines, run.place.rank) == (2, 1)
    assert run.place.options == {"num_machines": 2, "machine_rank": 1, "main_process_ip": "10.0.0.1",
                                 "main_process_port": 29600}
    # the same run may move to other machines and still --resume: run_config.yaml (which --resume compares) omits them
    assert not set(place) & set(record.run_config(run))
    assert json.loads(record.describe(run))["settings"]["num_machines"] == 2


def test_machines_reach_accelerate_unchanged(data_file, tmp_path):
    run = resolved(data_file, tmp_path, num_processes=4, num_machines=2, machine_rank=1, main_process_ip="10.0.0.1",
                   main_process_port=29600)
    args, env = accelerate_view(launch.launch_command(run.profile, 4, ["--model", "m"], run.place))
    assert (args.num_processes, args.num_machines, args.machine_rank) == (4, 2, 1)
    assert (args.main_process_ip, args.main_process_port) == ("10.0.0.1", 29600)
    # accelerate counts processes over all machines, as --num-processes does: 2 on each of the 2 machines
    assert (args.nnodes, args.nproc_per_node, args.node_rank) == ("2", "2", 1)
    assert args.rdzv_endpoint == "10.0.0.1:29600"


def test_a_profile_counts_processes_per_machine(monkeypatch):
    monkeypatch.setattr(launch, "gpu_count", lambda: 4)
    settings = settings_from_options(num_machines=2, machine_rank=0, main_process_ip="10.0.0.1")
    place = launch.place_of(settings)
    command = launch.launch_command(get_registry().profile("multi-gpu"), None, ["--model", "m"], place)
    args, env = accelerate_view(command)
    assert args.use_deepspeed and (args.num_processes, args.num_machines, args.machine_rank) == (8, 2, 0)
    assert yaml.safe_load(config_file(command).read_text())["num_processes"] == 8


def test_a_users_accelerate_config_replaces_the_profiles_and_the_flags_win(data_file, tmp_path):
    own = tmp_path / "accelerate.yaml"
    own.write_text(yaml.safe_dump({"compute_environment": "LOCAL_MACHINE", "distributed_type": "MULTI_GPU",
                                   "num_machines": 2, "machine_rank": 0, "main_process_ip": "10.0.0.9",
                                   "num_processes": 16, "mixed_precision": "bf16", "use_cpu": False}))
    run = resolved(data_file, tmp_path, accelerate_config=str(own), machine_rank=1)
    command = launch.launch_command(run.profile, None, ["--model", "m"], run.place)
    assert config_file(command) == own
    args, _ = accelerate_view(command)
    assert (args.num_processes, args.num_machines, args.machine_rank, args.main_process_ip) == (16, 2, 1, "10.0.0.9")
    assert args.mixed_precision == "bf16" and args.multi_gpu


def test_dry_run_shows_the_launch_on_several_machines(data_file, tmp_path):
    code, output = invoke(*run_args(data_file, tmp_path / "out", "--num-processes", "2", "--machine-rank", "1",
                                    *MACHINES, "--dry-run"))
    assert code == 0, output
    command = json.loads(output[output.index("{"):])["launch"]
    args, _ = accelerate_view(command)
    assert (args.num_processes, args.num_machines, args.machine_rank, args.main_process_port) == (2, 2, 1, 29600)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("extra, expected", [
    (["--machine-rank", "1"], "--machine-rank 1 needs --num-machines above 1"),
    (["--num-machines", "2", "--machine-rank", "0"], "--num-machines 2 needs --main-process-ip"),
    (["--num-machines", "2", "--main-process-ip", "10.0.0.1"], "--num-machines 2 needs --machine-rank on each machine"),
    (["--num-machines", "2", "--machine-rank", "2", "--main-process-ip", "10.0.0.1"],
     "--machine-rank 2 is out of range for --num-machines 2; give each machine its own rank from 0 to 1"),
    (["--num-machines", "2", "--machine-rank", "0", "--main-process-ip", "10.0.0.1", "--num-processes", "3"],
     "--num-processes 3 counts the processes of all 2 machines together and does not split evenly"),
    (["--main-process-port", "70000"], "'main_process_port' (the port the machines meet on) must be at least 1 and at most 65535, got 70000"),
    (["--num-machines", "0"], "'num_machines' (machines training together) must be at least 1"),
    (["--accelerate-config", "{missing}"], "--accelerate-config: config file '{missing}' does not exist"),
    (["--accelerate-config", "{bad}"], "--accelerate-config: config file '{bad}' is not valid YAML (line 2"),
])
def test_machines_that_do_not_fit_together_are_refused_before_anything_loads(data_file, tmp_path, extra, expected):
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_machines: [2\n")
    names = {"missing": tmp_path / "nowhere.yaml", "bad": bad}
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("the user's own file")
    before = folder_hash(out)
    code, output = invoke(*run_args(data_file, out, *(part.format(**names) for part in extra)))
    assert code == 2, output
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and expected.format(**names) in errors[0], output
    assert folder_hash(out) == before


def launched_from(monkeypatch):
    """Run the launcher up to ``accelerate launch``, recording what it would start instead of starting it."""
    started = []
    monkeypatch.setattr(runner, "validate_model_available", lambda name: True)
    monkeypatch.setattr(launch, "run_launched", lambda command, checkpoint=None: started.append((command, checkpoint)) or 0)
    return started


def earlier_run(folder):
    folder.mkdir()
    (folder / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward": 0.5}) + "\n")
    (folder / "checkpoint-1").mkdir()
    (folder / "checkpoint-1" / "rng_state_1.pth").write_bytes(b"rng")


def test_a_machine_of_rank_above_0_claims_nothing_on_its_own_disk(data_file, tmp_path, monkeypatch):
    started = launched_from(monkeypatch)
    out = tmp_path / "out"
    earlier_run(out)  # what this machine's own disk holds: machine 0's launcher decides about the run folder
    before = folder_hash(out)
    code, output = invoke(*run_args(data_file, out, "--num-processes", "2", "--machine-rank", "1", *MACHINES))
    assert code == 0, output
    assert folder_hash(out) == before and not (out / ".grpo-run.lock").exists()
    ((command, checkpoint),) = started
    assert accelerate_view(command)[0].machine_rank == 1 and checkpoint is None
    # machine 0's launcher checks the folder as ever
    code, output = invoke(*run_args(data_file, out, "--num-processes", "2", "--machine-rank", "0", *MACHINES))
    assert code == 2 and "holds another run's outputs" in output and len(started) == 1


def test_a_resumed_run_on_rank_above_0_hands_on_the_checkpoint_it_shares(data_file, tmp_path, monkeypatch):
    started = launched_from(monkeypatch)
    out = tmp_path / "out"
    out.mkdir()
    code, output = invoke(*run_args(data_file, out, "--num-processes", "2", "--machine-rank", "1", *MACHINES,
                                    "--resume"))
    assert code == 2 and "Error: --resume on machine rank 1: no checkpoint in" in output, output
    assert "on a disk all the machines share" in output and not started
    out.rmdir()
    earlier_run(out)
    code, output = invoke(*run_args(data_file, out, "--num-processes", "2", "--machine-rank", "1", *MACHINES,
                                    "--resume"))
    assert code == 0, output
    assert started[0][1] == out / "checkpoint-1"


@pytest.mark.slow
def test_two_machines_train_one_run_together(tmp_path, cache_dir):
    """Two grpo-run launchers on 127.0.0.1, one CPU process each (gloo), train one run into one output folder."""
    script = shutil.which("grpo-run", path=os.path.dirname(sys.executable))
    assert script, "the grpo-run console script is not installed next to this Python"
    data = tmp_path / "data.jsonl"  # no readable gold answer: math counts every completion it sees as unscorable
    data.write_text("".join(json.dumps({"prompt": [{"role": "user", "content": f"Count to {i}"}],
                                        "answer": "no answer"}) + "\n" for i in range(1, 9)))
    out, per_device, port = tmp_path / "out", 2, free_port()
    args = [script, "--reward", "length", "--reward", "math", "--dataset", "local", "--dataset-arg", f"path={data}",
            "--model", "tiny-random", "--profile", "cpu", "--output-dir", str(out), "--no-preflight",
            "--max-steps", "2", "--set", "num_generations=2", "--set", f"per_device_train_batch_size={per_device}",
            "--set", "max_completion_length=8", "--num-processes", "2", "--num-machines", "2",
            "--main-process-ip", "127.0.0.1", "--main-process-port", str(port)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", GRPO_CACHE_DIR=str(cache_dir))
    machines = [subprocess.Popen([*args, "--machine-rank", str(rank)], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, env=env) for rank in (0, 1)]
    logs = [machine.communicate(timeout=900)[0] for machine in machines]
    assert [machine.returncode for machine in machines] == [0, 0], logs[0][-3000:] + logs[1][-3000:]
    assert "--machine_rank 1" in logs[1] and "final model saved to" in logs[0] and "final model saved" not in logs[1]
    assert (out / "final" / "config.json").is_file() and (out / "run_config.yaml").is_file()
    assert sorted((out / "checkpoint-2").glob("rng_state_*.pth")) == [out / "checkpoint-2" / "rng_state_0.pth",
                                                                     out / "checkpoint-2" / "rng_state_1.pth"]
    steps = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [m for m in steps if "step" in m]
    assert [m["step"] for m in steps] == [1, 2]
    # every completion of both machines' ranks is counted: 2 ranks x per_device each step
    assert [m["rewards/math/unscorable"] for m in steps] == [2 * per_device] * 2


def test_the_user_guides_machine_config_is_read_as_it_says(tmp_path):
    guide = (Path(__file__).resolve().parents[1] / "docs" / "user-guide.md").read_text()
    (block,) = [text for text in re.findall(r"```yaml\n(.*?)```", guide, re.S) if "num_machines" in text]
    path = tmp_path / "train.yaml"
    path.write_text(block)
    place = launch.place_of(settings_from_options(config_file=str(path), machine_rank=1))
    assert (place.machines, place.rank, place.options["main_process_ip"]) == (2, 1, "node001")
