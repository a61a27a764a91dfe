"""A tiny GRPO run with the judge reward: against the real embedded server, and against a judge that is gone."""

import json

import pytest

from grpo_core.settings.declared import RunSettings
from grpo_core.training import trainer

from grpo_core import RewardError
from grpo_reward_judge.server import embedded_server

pytestmark = pytest.mark.slow
SENTINEL = "sk-judge-sentinel-7f3a9c"


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "qa.jsonl"
    rows = [{"prompt": [{"role": "user", "content": f"What is {i} + {i}?"}], "answer": str(2 * i)} for i in range(1, 5)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _settings(data_file, out, judge: dict, steps: int) -> RunSettings:
    return RunSettings(
        rewards=["judge"], reward_args={"judge": {"max_tokens": 4, **judge}}, dataset="local",
        dataset_args={"path": str(data_file)}, model="tiny-random",
        grpo={"max_steps": steps, "num_generations": 2, "per_device_train_batch_size": 2, "max_completion_length": 8,
              "output_dir": str(out), "save_steps": steps},
    )


def test_a_tiny_run_is_judged_by_the_embedded_server_and_records_no_key(judge_plugin, data_file, tmp_path,
                                                                         monkeypatch):
    embedded_server()
    monkeypatch.setenv("JUDGE_TEST_KEY", SENTINEL)
    out = tmp_path / "out"
    run = trainer.resolve(_settings(data_file, out, {"api_key_env": "JUDGE_TEST_KEY"}, steps=2), log=lambda m: None)
    trained = trainer.train(run, log=lambda message: None)
    history = [entry for entry in trained.state.log_history if "rewards/judge/mean" in entry]
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
    from grpo_reward_judge.server import free_port

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    run = trainer.resolve(_settings(data_file, tmp_path / "out", {"base_url": url, "model": "m", "retries": 1},
                                    steps=1), log=lambda m: None)
    with pytest.raises(RewardError) as error:
        trainer.train(run, log=lambda message: None)
    message = str(error.value)
    assert f"the judge at {url} cannot be reached" in message and "\n" not in message
