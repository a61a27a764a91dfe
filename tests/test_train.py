"""End to end: grpo-run's training path through TRL's GRPOTrainer on a tiny local model."""

import json

import pytest

from grpo_core import Param, RewardSpec, hookimpl
from grpo_core.config import RunSettings
from grpo_core.plugins import registered
from grpo_core import training

import reward_fixtures as fx

pytestmark = pytest.mark.slow


class Plugin:
    @hookimpl
    def register_rewards(self, register):
        register(RewardSpec("count-a", "Share of the letter a", fx.count_a, columns=("answer",),
                            params=(Param("answer_column", "answer", str),)))


def test_two_steps_with_two_weighted_rewards(data_file, tmp_path, cache_dir):
    settings = RunSettings(
        rewards=["length", "count-a"],
        weights={"length": 0.5, "count-a": 2.0},
        reward_args={"length": {"target": 8}},
        dataset="local",
        dataset_args={"path": str(data_file)},
        model="tiny-random",
        grpo={"max_steps": 2, "num_generations": 2, "per_device_train_batch_size": 2,
              "max_completion_length": 8, "output_dir": str(tmp_path / "out"), "save_steps": 2},
    )
    with registered(Plugin()):
        run = training.resolve(settings, log=lambda message: None)
        assert run.grpo["reward_weights"] == [0.5, 2.0]
        trainer = training.train(run, log=lambda message: None)
    history = [entry for entry in trainer.state.log_history if "rewards/length/mean" in entry]
    assert len(history) == 2
    for entry in history:
        assert 0.0 <= entry["rewards/length/mean"] <= 1.0
        assert "rewards/count-a/mean" in entry
        assert entry["rewards/count-a/errors"] == 0.0
    assert trainer.args.reward_weights == [0.5, 2.0]
    records = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if "rewards/length/mean" in r] == [1, 2]
    assert (tmp_path / "out" / "final" / "config.json").exists()
    assert (tmp_path / "out" / "checkpoint-2").is_dir()
