"""`grpo-run` with no arguments is the embedded default run."""

import json

import pytest
import yaml
from click.testing import CliRunner

from grpo_core.cli import cli
from grpo_core.settings.layers import default_config_file
from grpo_core.plugins import get_registry
from grpo_core.builtin.profiles import native_bf16_cpu


def test_default_config_names_installed_plugins():
    config = yaml.safe_load(open(default_config_file()))
    registry = get_registry()
    for name in config["rewards"]:
        if name.partition("=")[0] not in registry.items["rewards"]:
            pytest.skip(f"reward plugin for {name} is not installed")
    assert config["model"] == "smollm2-135m" and config["model"] in registry.items["models"]
    assert config["compare"] > 0


def test_no_arguments_resolves_the_default_run(tmp_path):
    registry = get_registry()
    if not {"math", "xml-format"} <= set(registry.items["rewards"]) or "arithmetic" not in registry.items["datasets"]:
        pytest.skip("the math and xml-format plugins are not installed")
    result = CliRunner().invoke(cli, ["--dry-run", "--no-preflight"])
    assert result.exit_code == 0, result.output
    resolved = json.loads(result.output[result.output.index("{"):])
    assert [r["name"] for r in resolved["rewards"]] == ["math", "xml-format"]
    assert resolved["dataset"]["name"] == "arithmetic"
    assert resolved["model"]["name"] == "smollm2-135m"
    grpo = resolved["grpo_config"]
    native = native_bf16_cpu()  # bfloat16 matrix products only where the CPU computes them natively
    assert resolved["profile"]["name"] == ("cpu" if native is None else "cpu-bf16")
    assert grpo["use_cpu"] is True and grpo["bf16"] is (native is not None)
    assert grpo["gradient_checkpointing"] is False
    assert grpo["reward_weights"] == [1.0, 0.5]
    # Advantages are reward minus the group's mean: a format-only difference is not scaled up to a full push.
    from trl import GRPOConfig

    config = GRPOConfig(**{**grpo, "output_dir": str(tmp_path)})
    assert config.scale_rewards == "none" and config.max_steps == 26


def dry_run(*args):
    registry = get_registry()
    if not {"math", "xml-format", "length"} <= set(registry.items["rewards"]) or "arithmetic" not in registry.items["datasets"]:
        pytest.skip("the math, xml-format and length plugins are not installed")
    result = CliRunner().invoke(cli, [*args, "--dry-run", "--no-preflight"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output[result.output.index("{"):])


def test_another_model_keeps_the_default_dataset_and_rewards():
    default, resolved = dry_run(), dry_run("--model", "tiny-random")
    assert resolved["model"]["name"] == "tiny-random"
    assert resolved["dataset"] == default["dataset"]
    assert resolved["rewards"] == default["rewards"]
    assert resolved["grpo_config"]["max_steps"] == default["grpo_config"]["max_steps"]


def test_a_reward_flag_replaces_only_the_rewards():
    default, resolved = dry_run(), dry_run("--reward", "length")
    assert [r["name"] for r in resolved["rewards"]] == ["length"]
    assert resolved["grpo_config"]["reward_weights"] == [1.0]
    assert resolved["dataset"] == default["dataset"] and resolved["model"] == default["model"]
    assert resolved["settings"]["reward_args"] == {}  # xml-format's parameters left with it


def test_layers_merge_field_by_field():
    from grpo_core.settings.layers import layer

    merged = layer(
        {"rewards": ["math", "xml-format"], "reward_args": {"xml-format": {"tags": "answer"}, "math": {"rel_tol": 0}},
         "dataset": "arithmetic", "dataset_args": {"size": 10}, "grpo": {"max_steps": 30, "seed": 0}},
        {"grpo": {"max_steps": 5}, "reward_args": {"math": {"rel_tol": 0.1}}},
        {"rewards": ["math"], "dataset": "local", "dataset_args": {"path": "d.jsonl"}},
    )
    assert merged["rewards"] == ["math"] and merged["reward_args"] == {"math": {"rel_tol": 0.1}}
    assert merged["dataset_args"] == {"path": "d.jsonl"}
    assert merged["grpo"] == {"max_steps": 5, "seed": 0}


def test_arithmetic_asks_math_for_literal_numbers_in_any_run():
    # The dataset's own reward_params, not the default run's file: a run of another dataset keeps math's default.
    for args, allowed in (((), False), (("--dataset", "arithmetic", "--reward", "math"), False),
                          (("--dataset", "gsm8k", "--reward", "math"), True),
                          (("--dataset", "arithmetic", "--reward", "math", "--reward-arg", "math.allow_expressions=1"), True)):
        (math,) = [r for r in dry_run(*args)["rewards"] if r["name"] == "math"]
        assert math["params"]["allow_expressions"] is allowed, args
