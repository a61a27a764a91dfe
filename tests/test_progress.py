"""Where a run is, said on a terminal and off it: a plain line per logged step when the output is a pipe, a CI log
or a notebook, and every run's total time at its end."""

import io
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

from grpo_core.errors import GrpoError
from grpo_core.training import progress
from grpo_core.training.callbacks import ProgressCallback


@pytest.mark.parametrize("seconds, words", [(0, "0 s"), (38.4, "38 s"), (252, "4 min 12 s"), (3900, "1 h 05 min")])
def test_durations_in_words(seconds, words):
    assert progress.duration(seconds) == words


def test_a_pipe_is_no_terminal():
    assert not progress.is_terminal(io.StringIO())


def state(step, max_steps=4):
    return SimpleNamespace(is_world_process_zero=True, global_step=step, max_steps=max_steps)


def test_off_a_terminal_each_logged_step_is_a_plain_line_and_training_ends_with_its_time(monkeypatch):
    clock = iter([100.0, 110.0, 120.0, 131.0])
    monkeypatch.setattr("time.monotonic", lambda: next(clock))
    out = io.StringIO()
    callback = ProgressCallback(terminal=False, out=out)
    callback.on_train_begin(None, state(1), None)  # resumed after step 1
    callback.on_log(None, state(2), None, logs={"reward": 0.5, "reward_std": 0.25, "kl": 0.0012})
    callback.on_log(None, state(3), None, logs={"reward": None, "reward_std": float("nan")})
    callback.on_log(None, state(3), None, logs={"train_runtime": 9.0})  # the session's summary: no step
    callback.on_train_end(None, state(4), None)
    assert out.getvalue().splitlines() == [
        "training: 3 steps, to step 4",
        "step 2/4  reward 0.500  std 0.250  kl 0.0012  elapsed 10 s  left 20 s",
        "step 3/4  reward -  std -  elapsed 20 s  left 10 s",
        "trained 3 steps in 31 s",
    ]


@pytest.mark.slow
def test_a_piped_run_prints_a_line_per_logged_step_and_its_total_time(data_file, tmp_path, cache_dir):
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "grpo_core", "--reward", "length", "--reward-arg", "length.target=10", "--dataset",
         "local", "--dataset-arg", f"path={data_file}", "--model", "tiny-random", "--max-steps", "3", "--output-dir",
         str(out), "--no-preflight", "--set", "max_completion_length=8", "--set", "num_generations=2", "--set",
         "per_device_train_batch_size=2", "--set", "logging_steps=1"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    steps = [line for line in result.stdout.splitlines() if line.startswith("step ")]
    assert [line.split()[1] for line in steps] == ["1/3", "2/3", "3/3"], result.stdout
    assert all(re.search(r"reward \S+  std \S+  .*elapsed \d.* left ", line) for line in steps), steps
    assert re.search(r"^trained 3 steps in \d+ s$", result.stdout, re.M), result.stdout
    assert re.search(r"^total time: \d+ (s|min \d+ s)$", result.stderr, re.M), result.stderr[-2000:]


def test_preflight_says_what_it_checks_before_it_starts(capsys):
    from datasets import Dataset

    from grpo_core import load_rewards
    from grpo_core.training import runner

    run = SimpleNamespace(grpo={}, rewards=load_rewards(["length"], params={"length": {"target": 5}}), environments=[],
                          dataset=Dataset.from_list([{"prompt": f"Count to {i}"} for i in range(3)]),
                          settings=SimpleNamespace(tool_timeout=30.0))
    with pytest.raises(GrpoError):  # the length reward pays padding: what the checks found comes after the line
        runner.preflight(run)
    lines = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("grpo-run: warning: plugin ")]
    assert lines[0] == "preflight: quick checks of length on 3 dataset rows"  # (a broken fixture plugin's warning aside)
