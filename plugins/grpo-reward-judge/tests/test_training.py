"""A tiny GRPO run with the judge reward: against the real embedded server, and against a judge that is gone."""

import json
import threading
import time

import pytest

import yaml
from click.testing import CliRunner

from grpo_core.testing import free_port, grpo_run
from grpo_reward_judge.server import embedded_server, start_server

pytestmark = pytest.mark.slow
SENTINEL = "sk-judge-sentinel-7f3a9c"


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "qa.jsonl"
    rows = [{"prompt": [{"role": "user", "content": f"What is {i} + {i}?"}], "answer": str(2 * i)} for i in range(1, 5)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _train(data_file, out, judge: dict, steps: int):
    """``grpo-run`` on the tiny-random model, 2 completions of 8 tokens per prompt, the judge's verdicts of 4 tokens."""
    config = out.parent / f"{out.name}.yaml"
    config.write_text(yaml.safe_dump({"num_generations": 2, "per_device_train_batch_size": 2,
                                      "max_completion_length": 8, "save_steps": steps}))
    args = ["train", "--reward", "judge", "--dataset", "local", "--dataset-arg", f"path={data_file}", "--model",
            "tiny-random", "--max-steps", str(steps), "--output-dir", str(out), "--config", str(config),
            "--no-preflight", "--reward-arg", "judge.max_tokens=4"]
    for key, value in judge.items():
        args += ["--reward-arg", f"judge.{key}={value}"]
    return CliRunner().invoke(grpo_run, args, catch_exceptions=False)


def test_a_tiny_run_is_judged_by_the_embedded_server_and_records_no_key(judge_plugin, data_file, tmp_path,
                                                                         monkeypatch):
    embedded_server()
    monkeypatch.setenv("JUDGE_TEST_KEY", SENTINEL)
    out = tmp_path / "out"
    result = _train(data_file, out, {"api_key_env": "JUDGE_TEST_KEY"}, steps=2)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    history = [entry for entry in records if "rewards/judge/mean" in entry]
    assert len(history) == 2
    for entry in history:
        assert 0.0 <= entry["rewards/judge/mean"] <= 1.0
        for count in ("errors", "timeouts", "unscorable", "retries"):
            assert entry[f"rewards/judge/{count}"] >= 0.0
        assert entry["rewards/judge/errors"] == 0.0 and entry["rewards/judge/timeouts"] == 0.0
    config = (out / "run_config.yaml").read_text()
    assert "JUDGE_TEST_KEY" in config  # the variable's name is recorded, its value never
    leaked = [p for p in out.rglob("*") if p.is_file() and SENTINEL.encode() in p.read_bytes()]
    assert leaked == []


def test_a_step_whose_judge_cannot_be_reached_stops_the_run_with_one_line_naming_the_url(judge_plugin, data_file,
                                                                                          tmp_path):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    result = _train(data_file, tmp_path / "out", {"base_url": url, "model": "m", "retries": 1}, steps=1)
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and f"the judge at {url} cannot be reached" in errors[0]


def _logged_steps(path) -> int:
    lines = path.read_text().splitlines() if path.exists() else []
    return sum('"rewards/judge/mean"' in line for line in lines)


def test_killing_the_judge_server_mid_run_ends_it_with_one_line_and_a_saved_checkpoint(judge_plugin, data_file,
                                                                                       tmp_path):
    server = start_server()
    out = tmp_path / "out"

    def kill_after_two_steps():
        deadline = time.monotonic() + 300
        while _logged_steps(out / "metrics.jsonl") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        server.process.kill()

    killer = threading.Thread(target=kill_after_two_steps, daemon=True)
    killer.start()
    try:
        result = _train(data_file, out, {"base_url": server.url, "model": server.model, "retries": 1,
                                         "cache": "false"}, steps=30)
    finally:
        server.stop()
    killer.join(5)
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and f"the judge at {server.url} cannot be reached" in errors[0], result.output
    checkpoints = [p.name for p in out.glob("checkpoint-*")]
    assert len(checkpoints) == 1, result.output  # save_steps is 30: the one saved when the judge went away
    step = int(checkpoints[0].split("-")[1])
    assert 2 <= step < 30 and f"checkpoint of step {step} saved in {out / checkpoints[0]}" in errors[0]
    assert "Resume with: grpo-run --config" in errors[0] and not (out / "final").exists()
