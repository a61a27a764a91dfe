"""The remote:NAME reward against a real grpo-run serve: the served reward's scores, bounds and columns; a server
killed mid-run or silent gives counted errors and timeouts; an unreachable one stops the run at load."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from serve_helpers import TOKEN, Server, free_port

import grpo_core
from grpo_core.errors import UsageError

pytestmark = pytest.mark.slow  # each test here starts a server: a few seconds
COMPLETIONS = ["<answer>4</answer>", "The answer is 5", "\\boxed{4}", "no number", "4"]
ANSWERS = ["4", "4", "4", "4", "unreadable gold ~~"]


SERVED = ("--reward", "math", "--reward-arg", "math.answer_column=gold")


@pytest.fixture(scope="module", autouse=True)
def token():
    with pytest.MonkeyPatch.context() as patch:  # the remote reward sends the token it finds in the environment
        patch.setenv("GRPO_SERVE_TOKEN", TOKEN)
        yield


@pytest.fixture(scope="module")
def server(token):
    started = Server(*SERVED)
    yield started
    started.stop()


def remote(url: str, **params):
    return grpo_core.load_rewards(["remote:math"], {"remote:math": {"url": url, **params}})[0]


def counted(reward, **batch) -> tuple[list, dict]:
    counts = {}
    scores = reward.score(log_metric=lambda key, value: counts.__setitem__(key.rsplit("/", 1)[1], value), **batch)
    return scores, counts


def test_the_remote_reward_scores_as_the_served_reward_does(server):
    reward = remote(server.url)
    assert isinstance(reward, grpo_core.ConcurrentReward)
    assert reward.spec.bounds == (0.0, 1.0) and reward.columns == {"gold": "gold"}  # the server's remapped column
    [local] = grpo_core.load_rewards(["math"])
    scores, counts = counted(reward, completions=COMPLETIONS, gold=ANSWERS)
    assert scores == local.score(completions=COMPLETIONS, answer=ANSWERS)
    assert counts == {"errors": 0.0, "timeouts": 0.0, "unscorable": 1.0}


def test_a_server_killed_mid_run_gives_counted_errors_never_zeros():
    server = Server(*SERVED)
    reward = remote(server.url, retries=1, timeout=5)
    assert counted(reward, completions=COMPLETIONS, gold=ANSWERS)[0][0] == 1.0
    server.stop()
    scores, counts = counted(reward, completions=COMPLETIONS, gold=ANSWERS)
    assert scores == [None] * len(COMPLETIONS)
    assert counts == {"errors": float(len(COMPLETIONS)), "timeouts": 0.0, "unscorable": 0.0}


def test_a_server_that_never_answers_gives_counted_timeouts(server):
    reward = remote(server.url, retries=0, timeout=0.5)
    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        reward.params["url"] = f"http://127.0.0.1:{silent.getsockname()[1]}"
        scores, counts = counted(reward, completions=COMPLETIONS, gold=ANSWERS)
    assert scores == [None] * len(COMPLETIONS)
    assert counts == {"errors": 0.0, "timeouts": float(len(COMPLETIONS)), "unscorable": 0.0}


def test_a_missing_column_is_one_line_before_any_request(server):
    reward = remote(server.url)
    with pytest.raises(grpo_core.RewardError, match="needs the dataset column 'gold'"):
        reward.score(completions=COMPLETIONS, answer=ANSWERS)


def test_a_reward_the_server_does_not_serve_is_refused_at_load(server):
    with pytest.raises(UsageError, match="does not serve 'code'; it serves math"):
        grpo_core.load_rewards(["remote:code"], {"remote:code": {"url": server.url}})


def test_an_unreachable_server_stops_the_run_before_a_model_loads():
    port = free_port()
    result = subprocess.run(
        [sys.executable, "-m", "grpo_core", "--reward", "remote:math", "--reward-arg",
         f"remote:math.url=http://127.0.0.1:{port}", "--dataset", "arithmetic", "--model", "tiny-random",
         "--max-steps", "1", "--dry-run"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"Error: reward 'remote:math': cannot reach http://127.0.0.1:{port}/rewards: [Errno 111] Connection refused; "
        f"start it with grpo-run serve --reward math, or give its address with --reward-arg "
        f"remote:math.url=http://HOST:PORT"]
