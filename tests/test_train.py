"""End to end: grpo-run's training path through TRL's GRPOTrainer on a tiny local model."""

import json

import pytest

from grpo_core import Param, RewardSpec, hookimpl
from grpo_core.settings.declared import RunSettings
from grpo_core.plugins import registered
from grpo_core.training.resolve import resolve

from cli_helpers import train_run

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
        run = resolve(settings, log=lambda message: None)
        assert run.grpo["reward_weights"] == [0.5, 2.0]
        trained = train_run(run, log=lambda message: None).trainer
    history = [entry for entry in trained.state.log_history if "rewards/length/mean" in entry]
    assert len(history) == 2
    for entry in history:
        assert 0.0 <= entry["rewards/length/mean"] <= 1.0
        assert "rewards/count-a/mean" in entry
        assert entry["rewards/count-a/errors"] == 0.0
    assert trained.args.reward_weights == [0.5, 2.0]
    records = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if "rewards/length/mean" in r] == [1, 2]
    assert (tmp_path / "out" / "final" / "config.json").exists()
    assert (tmp_path / "out" / "checkpoint-2").is_dir()


class LoraProfile:
    @hookimpl
    def register_profiles(self, register):
        from grpo_core import ProfileSpec

        register(ProfileSpec(
            "cpu-lora", "CPU with LoRA adapters",
            grpo_config={"use_cpu": True, "bf16": False, "gradient_checkpointing": False, "report_to": "none"},
            lora={"r": 4, "lora_alpha": 8, "target_modules": ["q_proj", "v_proj"], "task_type": "CAUSAL_LM"},
        ))


def test_merge_lora_writes_a_plain_model(data_file, tmp_path, cache_dir):
    from transformers import AutoModelForCausalLM

    settings = RunSettings(
        rewards=["length"], dataset="local", dataset_args={"path": str(data_file)}, model="tiny-random",
        profile="cpu-lora", merge_lora=True,
        grpo={"max_steps": 1, "num_generations": 2, "per_device_train_batch_size": 2, "max_completion_length": 4,
              "output_dir": str(tmp_path / "out")},
    )
    with registered(LoraProfile()):
        run = resolve(settings, log=lambda message: None)
        messages = []
        train_run(run, log=messages.append, progress=False)
    assert any("merged model saved to" in m for m in messages)
    assert (tmp_path / "out" / "final" / "adapter_config.json").exists()  # final/ holds the adapters
    merged = AutoModelForCausalLM.from_pretrained(tmp_path / "out" / "merged")
    assert not any("lora" in name for name, _ in merged.named_parameters())
