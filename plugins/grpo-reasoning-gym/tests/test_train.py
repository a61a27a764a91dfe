"""A short grpo-run training run on reasoning-gym rows with the tiny local model."""

import json
import os
import subprocess
import sys
import tempfile

import pytest

pytestmark = pytest.mark.slow


def _train(out, *extra):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               GRPO_CACHE_DIR=os.environ.get("GRPO_TEST_CACHE_DIR") or tempfile.mkdtemp(prefix="grpo-test-cache-"))
    command = [sys.executable, "-m", "grpo_core", "--dataset", "reasoning-gym", "--dataset-arg", "tasks=chain_sum",
               "--dataset-arg", "size=16", "--reward", "reasoning-gym", "--reward", "xml-format",
               "--model", "tiny-random", "--max-steps", "2", "--output-dir", str(out),
               "--set", "num_generations=2", "--set", "per_device_train_batch_size=2",
               "--set", "max_completion_length=8", "--set", "report_to=none", *extra]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_two_steps_on_chain_sum(tmp_path):
    out = tmp_path / "out"
    records = _train(out)
    steps = [r for r in records if "rewards/reasoning-gym/mean" in r]
    assert [r["step"] for r in steps] == [1, 2]
    assert all(r["rewards/reasoning-gym/errors"] == 0.0 for r in steps)
    assert (out / "final" / "config.json").exists()


def test_curriculum_level_is_logged_and_kept_in_checkpoints(tmp_path):
    out = tmp_path / "out"
    records = _train(out, "--dataset-arg", "curriculum=true", "--set", "save_steps=2")
    steps = [r for r in records if "rewards/reasoning-gym/mean" in r]
    assert [r["curriculum/chain_sum/level"] for r in steps] == [0.0, 0.0]
    state = json.loads((out / "checkpoint-2" / "trainer_state.json").read_text())
    stored = state["stateful_callbacks"]["CurriculumCallback"]
    stored = stored[0] if isinstance(stored, list) else stored
    assert stored["attributes"]["levels"] == {"chain_sum": 0}
