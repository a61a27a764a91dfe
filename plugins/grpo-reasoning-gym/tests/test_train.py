"""A short grpo-run training run on reasoning-gym rows with the tiny local model."""

import json
import os
import subprocess
import sys
import tempfile

import pytest

pytestmark = pytest.mark.slow


def test_two_steps_on_chain_sum(tmp_path):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               GRPO_CACHE_DIR=os.environ.get("GRPO_TEST_CACHE_DIR") or tempfile.mkdtemp(prefix="grpo-test-cache-"))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "grpo_core", "--dataset", "reasoning-gym", "--dataset-arg", "tasks=chain_sum",
               "--dataset-arg", "size=16", "--reward", "reasoning-gym", "--reward", "xml-format",
               "--model", "tiny-random", "--max-steps", "2", "--output-dir", str(out),
               "--set", "num_generations=2", "--set", "per_device_train_batch_size=2",
               "--set", "max_completion_length=8", "--set", "report_to=none"]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in records if "rewards/reasoning-gym/mean" in r]
    assert [r["step"] for r in steps] == [1, 2]
    assert all(r["rewards/reasoning-gym/errors"] == 0.0 for r in steps)
    assert (out / "final" / "config.json").exists()
