"""Multi-stage runs: bad stage lists end in one sentence and exit 2 with the outputs untouched; --dry-run shows every
stage; a two-stage run with the tiny model writes per-stage folders and one metrics file, resumes inside stage 2,
and its weights follow their schedules (slow ones train)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from grpo_core import ProfileSpec, hookimpl
from grpo_core.plugins import registered

from cli_helpers import folder_hash, invoke

STAGE_TWO_STEPS = 40  # enough that Ctrl-C after its step 2 lands inside stage two, on a loaded machine or a fast one


def config(tmp_path, data_file, stages=None, **top) -> Path:
    """A two-stage config for the tiny model: stage `one` trains length, `two` length (linear weight) and math
    (adaptive weight)."""
    body = {
        "model": "tiny-random", "profile": "cpu", "dataset": "local", "dataset_args": {"path": str(data_file)},
        "rewards": ["length"], "reward_args": {"length": {"target": 10}}, "preflight": False,
        "stages": stages if stages is not None else [
            {"name": "one", "rewards": ["length"], "max_steps": 2},
            {"name": "two", "rewards": ["length", "math"], "max_steps": STAGE_TWO_STEPS,
             "reward_schedules": {"length": {"kind": "linear", "start": 1.0, "end": 0.5},
                                  "math": {"kind": "adaptive", "window": 8, "raise_to": 2.0, "lower_to": 0.5}}},
        ],
        "output_dir": str(tmp_path / "out"), "num_generations": 2, "per_device_train_batch_size": 2,
        "max_completion_length": 8, "logging_steps": 1, "save_steps": 100, **top,
    }
    path = tmp_path / "stages.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


@pytest.fixture
def earlier(tmp_path):
    """An output folder with an earlier staged run's files, which no refused command may change."""
    out = tmp_path / "out"
    (out / "one").mkdir(parents=True)
    (out / "one" / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward": 0.5}) + "\n")
    (out / "stages.json").write_text(json.dumps({"finished": {"one": {"steps": 1}}}))
    (out / "notes.txt").write_text("the user's own file")
    return out


def refused(args, expected, folder):
    before = folder_hash(folder)
    code, output = invoke(*args)
    assert code == 2, output
    lines = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, output
    for part in [expected] if isinstance(expected, str) else expected:
        assert part in lines[0], lines[0]
    assert folder_hash(folder) == before
    return lines[0]


ONE = {"name": "one", "rewards": ["length"], "max_steps": 2}


@pytest.mark.parametrize("stages, expected", [
    ([ONE, {"name": "two", "rewards": ["length"], "reward_schedules": {"length": {"kind": "exponential"}}}],
     ["stage 'two'", "reward_schedules of 'length': unknown kind 'exponential'; use one of linear, cosine, steps"]),
    ([ONE, {"name": "two", "rewards": ["length"], "reward_schedules": {"length": {"kind": "linear", "start": 1}}}],
     ["stage 'two'", "kind linear needs 'end'"]),
    ([ONE, {"name": "two", "rewards": ["length"], "reward_schedules": {"math": "adaptive"}}],
     ["stage 'two'", "schedule for reward 'math', which is not selected here (selected: length)"]),
    ([ONE, {"rewards": ["length"]}], ["stage 2 has no name", "give it name: WORD"]),
    ([ONE, {"name": "final"}], ["stage 2 has the name 'final', which cannot name its folder"]),
    ([ONE, dict(ONE)], "two stages are named 'one'; give each stage its own name"),
    ([ONE, {"name": "two", "model": "other"}], "stage 'two': 'model' is the same for every stage; set it at the top"),
    ([ONE, {"name": "two", "learning_rate": "fast"}], ["stage 'two'", "'learning_rate' expects float, got 'fast'"]),
    ({"name": "one"}, "'stages' must be a list of stages"),
    ([], "'stages' must be a list of stages"),
])
def test_bad_stage_lists_name_the_value(tmp_path, data_file, earlier, stages, expected):
    refused(["--config", config(tmp_path, data_file, stages)], expected, earlier)


def test_a_schedule_for_a_reward_no_stage_selects(tmp_path, data_file, earlier):
    path = config(tmp_path, data_file, [ONE], reward_schedules={"math": "adaptive"})
    refused(["--config", path], "reward_schedules gives a schedule for reward 'math', which no stage selects",
            earlier)


def test_stage_option_errors(tmp_path, data_file, earlier):
    path = config(tmp_path, data_file)
    refused(["--config", path, "--stage", "three"], "--stage 'three' is not a stage of", earlier)
    refused(["--config", path, "--stage", "two"],
            ["--stage two starts from the final model of stage 'one', which is not in", "run that stage first"],
            earlier)
    single = tmp_path / "single.yaml"
    single.write_text("rewards: [length]\n")
    refused(["--config", single, "--stage", "two"], f"config file '{single}' has no stages: list", earlier)


def test_bad_reward_weight_option(tmp_path, data_file, earlier):
    path = config(tmp_path, data_file)
    refused(["--config", path, "--reward-weight", "length"], "--reward-weight 'length' is not of the form", earlier)
    refused(["--config", path, "--reward-weight", "length=sawtooth"], "unknown kind 'sawtooth'", earlier)


def test_a_folder_holding_an_earlier_staged_run_is_refused(tmp_path, data_file, earlier):
    refused(["--config", config(tmp_path, data_file)], ["holds outputs of stage(s) one", "--resume", "--overwrite"],
            earlier)


def test_a_folder_holding_a_one_stage_run_is_refused(tmp_path, data_file):
    out = tmp_path / "out"
    (out / "checkpoint-2").mkdir(parents=True)
    (out / "run_config.yaml").write_text("rewards: [length]\n")
    (out / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward": 0.5}) + "\n")
    refused(["--config", config(tmp_path, data_file)], ["holds another run's outputs (checkpoint-2, run_config.yaml",
                                                        "--overwrite"], out)
    refused(["--config", config(tmp_path, data_file), "--resume"], "holds another run's outputs", out)


def test_dry_run_shows_every_stage_resolved(tmp_path, data_file, cache_dir):
    code, output = invoke("--config", config(tmp_path, data_file), "--dry-run")
    assert code == 0, output
    shown = json.loads(output[output.index("{"):])
    one, two = shown["stages"]
    assert (one["name"], two["name"]) == ("one", "two")
    assert one["folder"] == str(tmp_path / "out" / "one") and one["grpo_config"]["max_steps"] == 2
    assert two["grpo_config"]["output_dir"] == str(tmp_path / "out" / "two")
    assert two["model"]["name"] == str(tmp_path / "out" / "one" / "final")
    assert [r["name"] for r in one["rewards"]] == ["length"]
    schedules = {r["name"]: r.get("schedule") for r in two["rewards"]}
    assert schedules["length"] == {"kind": "linear", "start": 1.0, "end": 0.5, "steps": 0}
    assert schedules["math"]["kind"] == "adaptive" and schedules["math"]["low"] == 0.3
    assert not (tmp_path / "out").exists()


def test_reward_weight_option_on_a_one_stage_run(data_file, tmp_path, cache_dir):
    code, output = invoke("--reward", "length", "--reward", "math", "--reward-weight", "math=adaptive:window=16",
                          "--reward-weight", "length=cosine:start=1,end=0", "--dataset", "local", "--dataset-arg",
                          f"path={data_file}", "--model", "tiny-random", "--output-dir", tmp_path / "o", "--dry-run")
    assert code == 0, output
    rewards = {r["name"]: r for r in json.loads(output[output.index("{"):])["rewards"]}
    assert rewards["math"]["schedule"]["window"] == 16 and rewards["length"]["schedule"]["kind"] == "cosine"


def test_run_config_keeps_the_schedules_so_resume_continues_with_them(data_file, tmp_path, cache_dir):
    """A one-stage run's run_config.yaml (what its resume command reads) holds its schedules, fully resolved."""
    from grpo_core.rundir import record
    from grpo_core.training.resolve import resolve
    from grpo_core.settings.layers import settings_from_options

    settings = settings_from_options(rewards=("length", "math"), dataset="local", dataset_args=(f"path={data_file}",),
                                     model="tiny-random", output_dir=str(tmp_path / "o"),
                                     reward_schedules=("math=adaptive:window=8", "length=steps:0=1,5=0.25"))
    run = resolve(settings, log=lambda m: None, load_dataset=False)
    record.write_run_config(run, tmp_path / "run_config.yaml")
    again = resolve(settings_from_options(config_file=str(tmp_path / "run_config.yaml")),
                             log=lambda m: None, load_dataset=False)
    assert {n: s.describe() for n, s in again.schedules.items()} == {n: s.describe() for n, s in run.schedules.items()}
    assert again.schedules["length"].weight(4, 10) == 1.0 and again.schedules["length"].weight(5, 10) == 0.25
    assert again.schedules["math"].fields["window"] == 8


# --- end to end, with the tiny model ------------------------------------------------------------


def grpo_run(*args):
    return subprocess.Popen([sys.executable, "-m", "grpo_core", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def logged(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [r for r in map(json.loads, path.read_text().splitlines()) if "reward" in r]


@pytest.mark.slow
def test_two_stages_interrupted_in_stage_two_and_resumed(tmp_path, data_file, cache_dir):
    path = config(tmp_path, data_file)
    out = tmp_path / "out"
    process = grpo_run("--config", path)
    deadline = time.monotonic() + 240
    while len(logged(out / "two" / "metrics.jsonl")) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert process.poll() is None, process.communicate()[1][-3000:]
    os.kill(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-3000:]
    assert "stage 'two' interrupted at step" in stderr and f"Resume with: grpo-run --config {path} --resume" in stderr
    assert json.loads((out / "stages.json").read_text())["finished"] == {"one": {"steps": 2}}
    assert (out / "one" / "final" / "config.json").exists() and not (out / "two" / "final").exists()
    (checkpoint,) = (out / "two").glob("checkpoint-*")
    stopped_at = int(checkpoint.name.split("-")[1])
    assert 2 <= stopped_at < STAGE_TWO_STEPS
    stored = json.loads((checkpoint / "trainer_state.json").read_text())["stateful_callbacks"]
    assert stored["RewardWeightsCallback"]["attributes"]["schedules"]["math"]["outcomes"]  # the weight's state

    resumed = grpo_run("--config", path, "--resume")
    _, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr[-3000:]
    assert f"resuming from {checkpoint}" in stderr and "stage 'one' (1 of 2)" not in stderr  # not trained again

    records = logged(out / "metrics.jsonl")
    assert [r["step"] for r in records] == list(range(1, 3 + STAGE_TWO_STEPS))  # global steps, each once
    assert [r["stage"] for r in records] == ["one"] * 2 + ["two"] * STAGE_TWO_STEPS
    assert [r["stage_step"] for r in records] == [1, 2, *range(1, STAGE_TWO_STEPS + 1)]
    assert all("rewards/math/mean" not in r and "weights/length" not in r for r in records[:2])
    two = records[2:]
    for record in two:  # the linear schedule, 1.0 at the stage's first step to 0.5 at its last, across the resume
        expected = 1.0 - 0.5 * (record["stage_step"] - 1) / (STAGE_TWO_STEPS - 1)
        assert record["weights/length"] == pytest.approx(expected)
    for before, after in zip(two, two[1:]):  # the adaptive weight follows the success rate of the step before
        rate = before["weights/math/success_rate"]
        expected = 2.0 if rate < 0.3 else 0.5 if rate > 0.8 else before["weights/math"]
        assert after["weights/math"] == expected, (before, after)
    # the weights reach TRL: its weighted total is the weighted sum of the per-reward means
    for record in two:
        total = record["weights/length"] * record["rewards/length/mean"] + record["weights/math"] * record[
            "rewards/math/mean"]
        assert record["reward"] == pytest.approx(total, abs=1e-5)
    assert all(0.0 <= r["rewards/length/mean"] <= 1.0 for r in records)  # the reward's own metric keeps its bounds
    assert (out / "two" / "final" / "config.json").exists() and (out / "reward_curve.png").stat().st_size > 0
    saved = yaml.safe_load((out / "two" / "run_config.yaml").read_text())
    assert saved["model"] == str(out / "one" / "final") and saved["reward_schedules"]["length"]["kind"] == "linear"
    assert json.loads((out / "stages.json").read_text())["finished"] == {"one": {"steps": 2},
                                                                         "two": {"steps": STAGE_TWO_STEPS}}


class LoraOnCpu:
    @hookimpl
    def register_profiles(self, register):
        register(ProfileSpec("cpu-lora", "LoRA on a CPU (tests)", grpo_config={"use_cpu": True},
                                 lora={"r": 4, "lora_alpha": 8, "target_modules": "all-linear"}))


@pytest.mark.slow
def test_a_lora_stage_continues_the_adapter_of_the_stage_before(tmp_path, data_file, cache_dir):
    from safetensors.torch import load_file

    stages = [{"name": "one", "rewards": ["length"], "max_steps": 2, "learning_rate": 0.05},
              {"name": "two", "rewards": ["length"], "max_steps": 1, "learning_rate": 0.0}]
    path = config(tmp_path, data_file, stages, profile="cpu-lora")
    with registered(LoraOnCpu(), distribution="test-profiles"):
        code, output = invoke("--config", path)
        assert code == 0, output
        code, dry = invoke("--config", path, "--dry-run", "--stage", "two")
    out = tmp_path / "out"
    shown = json.loads(dry[dry.index("{"):])["stages"]
    assert [s["name"] for s in shown] == ["two"] and shown[0]["adapter"] == str(out / "one" / "final")
    first = load_file(out / "one" / "final" / "adapter_model.safetensors")
    second = load_file(out / "two" / "final" / "adapter_model.safetensors")
    trained = [k for k in first if "lora_B" in k and first[k].abs().sum() > 0]
    assert trained  # stage one moved its adapter off its zero start
    # stage two trained at learning rate 0: it ends with the adapter it started from, stage one's (a new one is zero)
    assert all((first[k] == second[k]).all() for k in first)
    card = json.loads((out / "two" / "final" / "adapter_config.json").read_text())
    assert card["base_model_name_or_path"] != str(out / "one" / "final")


@pytest.mark.slow
def test_one_stage_alone(tmp_path, data_file, cache_dir):
    code, output = invoke("--config", config(tmp_path, data_file), "--stage", "one")
    assert code == 0, output
    out = tmp_path / "out"
    assert (out / "one" / "final").is_dir() and not (out / "two").exists()
    assert [r["stage"] for r in logged(out / "metrics.jsonl")] == ["one", "one"]
    code, output = invoke("--config", config(tmp_path, data_file), "--stage", "two", "--max-steps", "1")
    assert code == 0, output
    assert f"starts from the final model of stage 'one' ({out / 'one' / 'final'})" in output
    assert [(r["step"], r["stage"]) for r in logged(out / "metrics.jsonl")] == [(1, "one"), (2, "one"), (3, "two")]
    code, output = invoke("--config", config(tmp_path, data_file), "--stage", "one", "--max-steps", "1",
                          "--overwrite")
    assert code == 0, output
    assert "--overwrite: replaced the earlier run's one/" in output
    assert json.loads((out / "stages.json").read_text())["finished"] == {"one": {"steps": 1}, "two": {"steps": 1}}
    assert [(r["step"], r["stage"]) for r in logged(out / "metrics.jsonl")] == [(1, "one"), (2, "two")]
