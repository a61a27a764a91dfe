"""The reward served by a real ``grpo-run serve`` and scored through ``remote:reward-model``: the same scores as in
this process, and the bounds the server's parameters give."""

import os
import subprocess
import sys
import time
import urllib.request

import pytest

from grpo_core import load_rewards
from grpo_core.testing import free_port

pytestmark = pytest.mark.slow
TOKEN = "reward-model-test-token"
PROMPTS = [[{"role": "user", "content": "What is 7 + 5?"}]] * 3
COMPLETIONS = ["<answer>12</answer>", "The answer is 13.", "7 + 5 = 12\n<answer>12</answer>"]


@pytest.fixture(scope="module")
def served(untrained_model, tmp_path_factory):
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRPO_SERVE_TOKEN": TOKEN}
    process = subprocess.Popen(
        [sys.executable, "-m", "grpo_core", "serve", "--port", str(port), "--log-level", "warning", "--reward",
         "reward-model", "--reward-arg", f"reward-model.model={untrained_model}", "--reward-arg",
         "reward-model.normalize=none", "--reward-arg", "reward-model.bounds=-5,5"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read()
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                if answer.status == 200:
                    break
        except OSError:
            time.sleep(0.3)
    yield url
    process.kill()
    process.wait(timeout=30)
    process.stderr.close()


def test_remote_scores_are_the_local_scores_with_the_served_bounds(served, untrained_model, monkeypatch):
    monkeypatch.setenv("GRPO_SERVE_TOKEN", TOKEN)
    [remote] = load_rewards(["remote:reward-model"], {"remote:reward-model": {"url": served}})
    [local] = load_rewards(["reward-model"], {"reward-model": {"model": untrained_model, "normalize": "none",
                                                               "bounds": "-5,5"}})
    assert remote.spec.bounds == (-5.0, 5.0) == local.spec.bounds
    remote_scores = remote.score(prompts=PROMPTS, completions=COMPLETIONS)
    local_scores = local.score(prompts=PROMPTS, completions=COMPLETIONS)
    assert remote_scores == pytest.approx(local_scores, abs=1e-5)
