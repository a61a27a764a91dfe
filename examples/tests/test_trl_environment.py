"""examples/trl_environment.py, the plain TRL script docs/other-trainers.md shows, trains two steps with the
calculator environment and logs its reward and TRL's tool metrics beside math's."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "trl_environment.py"


@pytest.mark.slow
def test_trl_trains_with_the_environment_class_unchanged(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": ""}
    result = subprocess.run([sys.executable, str(EXAMPLE), "--max-steps", "2", "--output-dir", str(tmp_path / "out")],
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "FutureWarning" not in result.stderr, result.stderr[-3000:]
    lines = [line for line in result.stdout.split("per step:\n", 1)[1].splitlines() if line.startswith("  step ")]
    steps = {int(line.split(":", 1)[0].split()[1]): json.loads(line.split(":", 1)[1]) for line in lines}
    assert sorted(steps) == [1, 2]
    for logged in steps.values():
        assert {"rewards/math/mean", "rewards/Calculator/mean", "tools/call_frequency"} <= set(logged)
        assert 0.0 <= logged["rewards/Calculator/mean"] <= 1.0


def test_the_episode_by_hand_in_the_docs_prints_what_they_show():
    """docs/other-trainers.md, "TRL: an environment class": its first example runs and prints the text block after it,
    and the trainer it shows is the script's."""
    import re

    docs = Path(__file__).resolve().parents[2] / "docs" / "other-trainers.md"
    section = docs.read_text().split("## TRL: an environment class", 1)[1].split("\n## ", 1)[0]
    code, shown = re.search(r"```python\n(.*?)```\n\n```text\n(.*?)```", section, re.S).groups()
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == shown
    assert "environment_factory=functools.partial(Calculator, max_calls=4)," in EXAMPLE.read_text()
