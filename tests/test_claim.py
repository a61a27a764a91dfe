"""The run folder's rules in one place: a resumed run's checkpoint is found once and handed on (to the trainer,
and to the processes accelerate launches), and the callbacks run in the order their logs need."""

import json
import os
import struct
import subprocess
import sys

import pytest

from grpo_core.errors import UsageError
from grpo_core.rundir import claim, folder
from grpo_core.training.callbacks import MetricsCallback, MonitorCallback, run_callbacks
from grpo_core.rundir.record import write_run_config
from grpo_core.settings.layers import settings_from_options
from grpo_core.training import launch, train
from grpo_core.training.resolve import resolve


def safetensors_bytes() -> bytes:
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    return struct.pack("<Q", len(header)) + header + b"\0" * 8


@pytest.fixture
def resumed(data_file, tmp_path):
    """A run asked with --resume, and its output folder holding the same run stopped at checkpoint-2."""
    out = tmp_path / "out"
    out.mkdir()
    settings = settings_from_options(rewards=("length",), dataset="local", dataset_args=(f"path={data_file}",),
                                     model="tiny-random", output_dir=str(out), max_steps=4, resume=True,
                                     overrides=("num_generations=2", "per_device_train_batch_size=2"))
    run = resolve(settings, log=lambda m: None, load_dataset=False)
    write_run_config(run, out / "run_config.yaml")
    (out / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "reward": 0.5}) + "\n" for s in (1, 2, 3)))
    for step in (1, 2):
        checkpoint = out / f"checkpoint-{step}"
        checkpoint.mkdir()
        (checkpoint / "trainer_state.json").write_text(json.dumps({"global_step": step, "log_history": []}))
        (checkpoint / "model.safetensors").write_bytes(safetensors_bytes())
    return run


@pytest.fixture
def trained(monkeypatch):
    """What the trainer was handed: ``_train`` replaced so that nothing loads."""
    handed = []
    monkeypatch.setattr(train, "_train", lambda run, log, progress, out, checkpoint, summary: handed.append(checkpoint))
    return handed


def test_a_resumed_run_finds_its_checkpoint_once_and_hands_it_to_the_trainer(resumed, trained, monkeypatch):
    checked = []
    check = claim.validate_resumable
    monkeypatch.setattr(claim, "validate_resumable", lambda *a, **k: checked.append(a) or check(*a, **k))
    held = claim.claim_outputs(resumed)
    try:
        train.train(resumed, held, log=lambda m: None)
    finally:
        held.release()
    out = resumed.grpo["output_dir"]
    assert len(checked) == 1  # claimed once; train() does not scan the folder again
    assert [str(c) for c in trained] == [f"{out}/checkpoint-2"]
    assert [json.loads(line)["step"] for line in open(f"{out}/metrics.jsonl")] == [1, 2]  # cut at the checkpoint


def test_a_launched_process_resumes_the_checkpoint_the_launching_process_checked(resumed, trained, monkeypatch):
    out = resumed.grpo["output_dir"]
    monkeypatch.setenv(launch.LAUNCHED_ENV, "1")
    monkeypatch.setenv(launch.CHECKPOINT_ENV, f"{out}/checkpoint-1")  # not the last: handed on, not found again
    monkeypatch.setattr(claim, "validate_resumable", lambda *a, **k: pytest.fail("a launched process checks again"))
    train.train(resumed, train.claim_folder(resumed), log=lambda m: None)
    assert [str(c) for c in trained] == [f"{out}/checkpoint-1"]


def test_the_launcher_hands_the_checkpoint_to_the_processes_it_starts(monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr("subprocess.call", lambda command, env: seen.append(env) or 0)
    monkeypatch.setenv(launch.CHECKPOINT_ENV, "left over from an outer run")
    launch.run_launched(["true"], tmp_path / "checkpoint-3")
    launch.run_launched(["true"])
    assert seen[0][launch.CHECKPOINT_ENV] == str(tmp_path / "checkpoint-3") and seen[0][launch.LAUNCHED_ENV] == "1"
    assert launch.CHECKPOINT_ENV not in seen[1]


def test_resume_and_overwrite_are_refused_together_by_one_rule_for_a_run_and_a_staged_run(tmp_path):
    with pytest.raises(Exception) as single:
        folder.validate_output_dir(tmp_path, resume=True, overwrite=True)
    with pytest.raises(Exception) as staged:
        claim.validate_staged(tmp_path, ["one"], ["one"], resume=True, overwrite=True)
    assert str(single.value) == str(staged.value) and "contradict each other" in str(single.value)


class AddsToLogs:
    def on_log(self, args, state, control, logs=None, **kwargs):
        logs["weights/length"] = 0.5


def test_callbacks_that_add_to_the_logs_run_before_the_one_that_writes_metrics(tmp_path):
    callbacks = run_callbacks(object(), tmp_path, max_steps=4, warn=print, loggers=[AddsToLogs()])
    kinds = [type(c) for c in callbacks]
    assert kinds.index(AddsToLogs) < kinds.index(MonitorCallback) < kinds.index(MetricsCallback)
    state = type("State", (), {"is_world_process_zero": True, "global_step": 1})()
    logs = {"reward": 0.5, "reward_std": 0.1, "rewards/length/mean": 0.5}
    for callback in callbacks:  # as transformers' CallbackHandler calls them: in order, on the same dict
        if type(callback) in (AddsToLogs, MonitorCallback, MetricsCallback):
            callback.on_log(None, state, None, logs=logs)
    (row,) = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert row["weights/length"] == 0.5 and row["unscored_steps"] == 0


# --- a folder where no step finished holds nothing the user made ----------------------------------


def unfinished_run(data_file, out, **settings):
    """The run of ``test_faults.run_args`` into ``out``, and ``out`` as that run left it when its first step failed:
    its run_config.yaml and an empty metrics.jsonl, beside a file of the user's."""
    out.mkdir()
    run = resolve(settings_from_options(rewards=("length",), dataset="local", dataset_args=(f"path={data_file}",),
                                        model="tiny-random", output_dir=str(out), max_steps=4, **settings,
                                        overrides=("num_generations=2", "per_device_train_batch_size=2")),
                  log=lambda m: None, load_dataset=False)
    write_run_config(run, out / "run_config.yaml")
    (out / "metrics.jsonl").write_text("")
    (out / "notes.txt").write_text("the user's own file")
    return run


def test_a_folder_where_no_step_finished_is_taken_by_the_next_run_which_says_so(data_file, tmp_path):
    out = tmp_path / "out"
    run = unfinished_run(data_file, out)
    messages = []
    held = claim.claim_outputs(run, log=messages.append)
    try:
        assert held.checkpoint is None
        claim.replace_outputs(run, log=messages.append)
    finally:
        held.release()
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert messages == [f"output folder '{out}' held only what a run that finished no step left (run_config.yaml, "
                        "metrics.jsonl); this run takes it"]


def test_a_folder_with_a_logged_step_is_still_another_runs(data_file, tmp_path):
    out = tmp_path / "out"
    run = unfinished_run(data_file, out)
    (out / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward": 0.5}) + "\n")
    with pytest.raises(UsageError, match="holds another run's outputs \\(run_config.yaml, metrics.jsonl\\)"):
        claim.validate_outputs(run)


def test_resume_into_a_folder_where_no_step_finished_says_to_run_without_it(data_file, tmp_path, cache_dir):
    from test_faults import refused, run_args

    out = tmp_path / "out"
    unfinished_run(data_file, out)
    refused(run_args(data_file, out, "--resume"), [f"--resume: the run in '{out}' finished no step, so there is "
                                                   "nothing to resume; run the same command without --resume"], out)


def test_a_live_run_that_has_not_finished_a_step_keeps_its_folder(data_file, tmp_path):
    out = tmp_path / "out"
    run = unfinished_run(data_file, out)
    hold = ("import time; from grpo_core.rundir.folder import RunLock; "
            f"RunLock({str(out)!r}).acquire(); print('locked', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(UsageError, match=f"is in use by another run \\(pid {holder.pid}"):
            claim.validate_outputs(run)  # as a control run's folder is checked, before this process locks it
        with pytest.raises(UsageError, match=f"is in use by another run \\(pid {holder.pid}"):
            claim.claim_outputs(run)
    finally:
        holder.kill()
        holder.wait()
    assert (out / "run_config.yaml").is_file()


BROKEN = '''import os


def score(completion, **columns):
    """Fails on every completion while BROKEN is set, as a reward with a bug in it."""
    if os.environ.get("BROKEN"):
        raise ValueError("a bug in the reward")
    return float(len(completion) % 2)
'''


@pytest.mark.slow
def test_the_same_command_reruns_into_the_folder_of_a_run_that_failed_at_its_first_step(data_file, tmp_path, cache_dir):
    reward = tmp_path / "mine.py"
    reward.write_text(BROKEN)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "grpo_core", "--reward", f"{reward}:score", "--dataset", "local", "--dataset-arg",
               f"path={data_file}", "--model", "tiny-random", "--max-steps", "2", "--output-dir", str(out),
               "--no-preflight", "--set", "max_completion_length=8", "--set", "num_generations=2", "--set",
               "per_device_train_batch_size=2"]
    failed = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, "BROKEN": "1"})
    assert failed.returncode == 1, failed.stderr[-3000:]
    assert "no step had finished" in failed.stderr and "Traceback" not in failed.stderr
    assert (out / "run_config.yaml").is_file() and not list(out.glob("checkpoint-*"))
    fixed = subprocess.run(command, capture_output=True, text=True, timeout=300, env=os.environ)
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert f"output folder '{out}' held only what a run that finished no step left (run_config.yaml" in fixed.stderr
    assert (out / "final" / "config.json").is_file()
