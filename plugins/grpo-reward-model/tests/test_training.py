"""A policy trained with the reward-model reward, offline: two GRPO steps of the tiny-random model on arithmetic."""

import json

import pytest
import yaml
from click.testing import CliRunner

from grpo_core.testing import grpo_run

pytestmark = pytest.mark.slow


def test_two_steps_train_offline_with_the_reward_model(untrained_model, tmp_path):
    out = tmp_path / "out"
    config = tmp_path / "small.yaml"
    config.write_text(yaml.safe_dump({"num_generations": 2, "per_device_train_batch_size": 2,
                                      "max_completion_length": 8, "save_steps": 2}))
    result = CliRunner().invoke(grpo_run, [
        "--reward", "reward-model", "--reward-arg", f"reward-model.model={untrained_model}", "--dataset",
        "arithmetic", "--model", "tiny-random", "--max-steps", "2", "--output-dir", str(out), "--config",
        str(config), "--no-preflight"], catch_exceptions=False)  # an untrained model pays junk: preflight stops it
    assert result.exit_code == 0, result.output
    history = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    means = [row["rewards/reward-model/mean"] for row in history if "rewards/reward-model/mean" in row]
    assert len(means) == 2 and all(0.0 <= m <= 1.0 for m in means)
    assert all(row.get("rewards/reward-model/errors", 0.0) == 0.0 for row in history)
    assert (out / "final" / "config.json").exists()
