"""Nothing lost: Ctrl-C saves a checkpoint and exits with 130; --resume continues to the same step count."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow


def grpo_run(*args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "grpo_core", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def logged_steps(path):
    if not path.exists():
        return []
    return [json.loads(line)["step"] for line in path.read_text().splitlines() if '"reward"' in line]


STEPS = 60  # the tiny model takes a few steps a second: enough that Ctrl-C after step 2 lands before the end


def test_ctrl_c_then_resume(data_file, tmp_path, cache_dir):
    out = tmp_path / "out"
    process = grpo_run(
        "--reward", "length", "--reward-arg", "length.target=10", "--dataset", "local", "--dataset-arg",
        f"path={data_file}", "--model", "tiny-random", "--max-steps", str(STEPS), "--output-dir", str(out),
        "--no-preflight",
        "--set", "max_completion_length=8", "--set", "num_generations=2", "--set", "per_device_train_batch_size=2",
        "--set", "save_steps=100",
    )
    deadline = time.monotonic() + 180
    while len(logged_steps(out / "metrics.jsonl")) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert process.poll() is None, process.communicate()[1][-3000:]
    os.kill(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-3000:]  # interrupted, after saving
    assert "Resume with: grpo-run --config" in stderr
    checkpoints = sorted(out.glob("checkpoint-*"))
    assert len(checkpoints) == 1
    stopped_at = int(checkpoints[0].name.split("-")[1])
    assert 2 <= stopped_at < STEPS
    assert not (out / "final").exists()

    resumed = grpo_run("--config", str(out / "run_config.yaml"), "--resume", "--no-preflight")
    _, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr[-3000:]
    assert f"resuming from {checkpoints[0]}" in stderr
    assert logged_steps(out / "metrics.jsonl") == list(range(1, STEPS + 1))  # each step once, up to the same count
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [r["step"] for r in rows if "step" in r]
    assert len(steps) == len(set(steps))  # no step number is used twice, the sessions' summaries included
    assert [r["after_step"] for r in rows if r.get("summary")] == [stopped_at, STEPS]
    assert (out / "final" / "config.json").exists() and (out / "reward_curve.png").exists()
    lines = (out / "completions.jsonl").read_text().splitlines()
    record = json.loads(lines[-1])
    assert record["step"] == STEPS and set(record["rewards"]) == {"length"}


def test_sample_compares_models(data_file, cache_dir):
    process = grpo_run("sample", "--model", "tiny-random", "--dataset", "local", "--dataset-arg", f"path={data_file}",
                       "--reward", "length", "--reward-arg", "length.target=4", "-n", "3", "--max-new-tokens", "4", "--json")
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr[-3000:]
    (result,) = json.loads(stdout)
    assert result["n"] == 3 and result["model"] == "tiny-random"
    assert 0.0 <= result["means"]["length"] <= 1.0


FLAKY = '''import os


def flaky(completion, **columns):
    """Scores its first 6 completions (3 steps of 2), then fails on every one, as a scorer that went away."""
    path = os.environ["FLAKY_CALLS"]
    calls = int(open(path).read()) if os.path.exists(path) else 0
    with open(path, "w") as f:
        f.write(str(calls + 1))
    if calls >= 6:
        raise ValueError("the scorer went away")
    return float(len(completion) % 2)
'''


def test_a_reward_failure_mid_run_saves_the_finished_steps_and_the_run_resumes(data_file, tmp_path, cache_dir):
    reward = tmp_path / "flaky.py"
    reward.write_text(FLAKY)
    out = tmp_path / "out"
    env = {**os.environ, "FLAKY_CALLS": str(tmp_path / "calls")}
    process = grpo_run(
        "--reward", f"{reward}:flaky", "--dataset", "local", "--dataset-arg", f"path={data_file}", "--model",
        "tiny-random", "--max-steps", "5", "--output-dir", str(out), "--no-preflight", "--set",
        "max_completion_length=8", "--set", "num_generations=2", "--set", "per_device_train_batch_size=2",
        "--set", "save_steps=100", env=env)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 1, stderr[-3000:]
    errors = [line for line in stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "the scorer went away" in errors[0], stderr[-3000:]
    assert f"checkpoint of step 3 saved in {out / 'checkpoint-3'}. Resume with: grpo-run --config" in errors[0]
    assert "Traceback" not in stderr
    assert [p.name for p in out.glob("checkpoint-*")] == ["checkpoint-3"]
    assert (out / "checkpoint-3" / "trainer_state.json").exists() and not (out / "final").exists()
    kept = json.loads((out / "checkpoint-3" / "trainer_state.json").read_text())["stateful_callbacks"]
    assert len(kept["HealthCallback"]["attributes"]["health"]["flat_history"]) == 3  # the signals go on from here
    assert set(kept["MonitorCallback"]["attributes"]) == {"flat", "clipped", "unscored"}

    env["FLAKY_CALLS"] = str(tmp_path / "calls-after")  # the scorer is back
    resumed = grpo_run("--config", str(out / "run_config.yaml"), "--resume", "--no-preflight", env=env)
    _, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr[-3000:]
    assert f"resuming from {out / 'checkpoint-3'}" in stderr
    assert logged_steps(out / "metrics.jsonl") == [1, 2, 3, 4, 5]
    step_4 = next(json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()
                  if json.loads(line).get("step") == 4 and "reward" in json.loads(line))
    assert step_4["health/flat_groups_trend"] is not None  # fitted over steps 1-4, not over the resumed step alone
