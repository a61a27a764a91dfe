"""The example configs and the plain TRL script keep working with the installed grpo-core and plugins."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import invoke

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CONFIGS = sorted((EXAMPLES / "configs").glob("*.yaml"))


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path_factory):
    from grpo_core.plugins import use_registry

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("GRPO_CACHE_DIR", os.environ.get("GRPO_TEST_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "grpo-cache"))
    for variable in ("GRPO_LOAD_PLUGINS", "GRPO_DISABLE_PLUGINS", "GRPO_STRICT_PLUGINS"):
        monkeypatch.delenv(variable, raising=False)
    use_registry(None)
    yield
    use_registry(None)


@pytest.fixture
def gsm8k_file(tmp_path):
    """Two rows in openai/gsm8k's format, so configs that name gsm8k resolve offline."""
    path = tmp_path / "gsm8k.jsonl"
    rows = [{"question": "Tom has 3 apples and buys 4 more. How many now?", "answer": "3 + 4 = 7\n#### 7"},
            {"question": "What is 6 times 7?", "answer": "6 * 7 = 42\n#### 42"}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_the_example_configs_are_there():
    assert [p.name for p in CONFIGS] == ["calculator.yaml", "cpu-demo.yaml", "gpu-lora.yaml", "gpu-vllm.yaml", "multi-gpu-zero3.yaml",
                                         "two-stage.yaml"]


def test_cpu_demo_is_the_default_run_written_out():
    from importlib import resources

    from grpo_core.settings.layers import settings_from_options

    with resources.as_file(resources.files("grpo_core.settings") / "default_run.yaml") as default:
        expected = settings_from_options(config_file=str(default))
    demo = settings_from_options(config_file=str(EXAMPLES / "configs" / "cpu-demo.yaml"))
    for key in ("rewards", "weights", "reward_args", "dataset", "dataset_args", "model"):
        assert getattr(demo, key) == getattr(expected, key), key


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_config_resolves(config, gsm8k_file):
    """Every key is a grpo-core key or a real GRPOConfig field, the rewards, dataset and profile exist."""
    from grpo_core.training.resolve import resolve
    from grpo_core.plugins import get_registry
    from grpo_core.settings.layers import settings_from_options

    settings = settings_from_options(config_file=str(config))
    assert settings.profile in get_registry().items["profiles"]
    settings.model = "tiny-random"
    if settings.dataset == "gsm8k":
        settings.dataset_args["path"] = str(gsm8k_file)
    run = resolve(settings, log=lambda message: None)
    assert [r.__name__ for r in run.rewards] == settings.rewards + [e.name for e in run.environments]
    profile = get_registry().profile(settings.profile)
    assert run.profile.name == settings.profile or profile.pick is not None
    for key, value in settings.grpo.items():
        # Paths are stored absolute, so the run reproduces from any folder.
        assert run.grpo[key] == (os.path.abspath(value) if key == "output_dir" else value), key


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_config_dry_run(config, gsm8k_file):
    """`grpo-run --config FILE --dry-run` with the model swapped for the tiny one, as a user would."""
    from grpo_core.cli import cli
    from grpo_core.settings.layers import settings_from_options

    args = ["--config", str(config), "--model", "tiny-random", "--dry-run", "--no-preflight"]
    if settings_from_options(config_file=str(config)).dataset == "gsm8k":
        args += ["--dataset-arg", f"path={gsm8k_file}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    described = json.loads(result.stdout)
    if "stages" in described:  # a staged run: the first stage starts from the model given, each next from the last
        first, *later = described["stages"]
        assert first["model"]["name"] == "tiny-random"
        for before, stage in zip(described["stages"], later):
            assert stage["model"]["name"] == str(Path(before["folder"]) / "final")
        described = first
    assert described["model"]["name"] == "tiny-random"
    assert described["dataset"]["name"] == settings_from_options(config_file=str(config)).dataset
    if "multi-gpu" in config.stem:
        assert described["launch"] and "accelerate.commands.launch" in described["launch"]


@pytest.mark.slow
def test_two_stage_example_trains_with_the_tiny_model(tmp_path):
    """The staged recipe, two steps a stage: format first, then math and format with their weights scheduled."""
    out = tmp_path / "out"
    code, output = invoke("--config", EXAMPLES / "configs" / "two-stage.yaml", "--model", "tiny-random",
                          "--max-steps", "2", "--output-dir", out)
    assert code == 0, output[-3000:]
    assert output.index("stage 'correctness': preflight") < output.index("stage 'format' (1 of 2)")
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    records = [r for r in records if "reward" in r]
    assert [(r["step"], r["stage"]) for r in records] == [(1, "format"), (2, "format"), (3, "correctness"),
                                                          (4, "correctness")]
    assert [r["weights/xml-format"] for r in records[2:]] == [0.5, 0.1]  # linear from 0.5 to 0.1 over the stage
    assert (out / "correctness" / "final" / "config.json").exists() and (out / "reward_curve.png").exists()


@pytest.mark.slow
def test_trl_script_trains_two_steps(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": ""}
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "trl_script.py"), "--max-steps", "2", "--output-dir", str(tmp_path / "out")],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "FutureWarning" not in result.stderr, result.stderr[-3000:]
    lines = result.stdout.split("reward means per step:\n", 1)[1].splitlines()
    steps = {int(line.split(":", 1)[0].split()[1]): json.loads(line.split(":", 1)[1]) for line in lines if line.startswith("  step ")}
    assert sorted(steps) == [1, 2]
    for means in steps.values():
        assert 0.0 <= means["rewards/math/mean"] <= 1.0
        assert 0.0 <= means["rewards/xml-format/mean"] <= 1.0


@pytest.mark.slow
def test_the_calculator_config_trains_episodes_with_the_tiny_model(tmp_path):
    out = tmp_path / "calculator"
    code, output = invoke("--config", EXAMPLES / "configs" / "calculator.yaml", "--model", "tiny-random",
                          "--output-dir", out, "--max-steps", "2", "--set", "num_generations=2", "--set",
                          "per_device_train_batch_size=2", "--set", "max_completion_length=24", "--compare", "2",
                          "--dataset-arg", "size=20")
    assert code == 0, output[-3000:]
    assert "chat template: TRL's qwen2_5.jinja" in output
    assert "preflight: math, calculator: no property failed" in output
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in records if "step" in r and "reward" in r]
    assert len(steps) == 2
    for record in steps:
        assert {"rewards/math/mean", "rewards/calculator/mean", "tools/call_frequency", "health/tool_share"} <= set(record)
    header = next(line for line in output.splitlines() if line.startswith("model "))
    assert header.split()[1:] == ["math", "calculator", "tool-use"]
    assert (out / "final" / "config.json").is_file()
