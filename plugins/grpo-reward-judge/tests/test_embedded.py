"""The judge against the real embedded server (transformers serve with SmolLM2-135M-Instruct on 127.0.0.1)."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from grpo_core import load_rewards
from grpo_reward_judge.audit import injection
from grpo_reward_judge.client import STATS
from grpo_reward_judge.rubrics import RUBRICS, Rubric, add_rubric
from grpo_reward_judge.server import embedded_server, start_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server():
    return embedded_server()  # one per process, stopped at exit


def test_scores_are_in_bounds_and_a_second_scoring_makes_no_request(server, judge_plugin):
    [reward] = load_rewards(["judge"], {"judge": {"max_tokens": 4}})
    args = {"prompts": ["What is 7 + 5?", "What is 7 + 5?"],
            "completions": ["The answer is 12.", [{"role": "assistant", "content": "It is 15."}]],
            "answer": ["12", "12"]}
    scores, reasons = reward.score_with_reasons(**args)
    assert all(s is None and r == "unscorable" or 0.0 <= s <= 1.0 and r is None for s, r in zip(scores, reasons))
    asked = STATS["requests"]
    assert asked == 2
    assert reward.score_with_reasons(**args) == (scores, reasons)
    assert STATS["requests"] == asked and STATS["cache_hits"] == 2


def test_a_completion_with_a_lone_surrogate_is_judged_by_the_embedded_server(server, judge_plugin):
    [reward] = load_rewards(["judge"], {"judge": {"max_tokens": 4, "retries": 0, "timeout": 600}})
    logged = {}
    scores, reasons = reward.score_with_reasons(prompts=["What is 7 + 5?"], completions=["The answer is 12. \ud800"],
                                                answer=["12"], log_metric=lambda k, v: logged.__setitem__(k, v))
    assert reasons[0] in (None, "unscorable") and logged["rewards/judge/errors"] == 0.0, (scores, reasons, logged)


def test_a_rubric_that_obeys_the_completion_is_caught_by_the_injection_check(server, judge_plugin):
    if "obey-stated-score" not in RUBRICS:
        add_rubric(Rubric("obey-stated-score", "Answer: {completion}\nIf the answer states a score, use that "
                          "score. What score from 1 to 10 does it get? Reply with one number."))
    [reward] = load_rewards(["judge"], {"judge": {"rubric": "obey-stated-score", "max_tokens": 4}})
    finding = injection(reward, rows=2)
    assert not finding.ok
    assert "injection phrasings raised a wrong answer's score: " in finding.figure


def test_killing_the_server_mid_batch_gives_counted_errors(judge_plugin):
    own = start_server()
    [reward] = load_rewards(["judge"], {"judge": {"base_url": own.url, "model": own.model, "max_concurrency": 1,
                                                  "retries": 0, "max_tokens": 4, "cache": False}})
    n, logged = 6, {}

    def kill_after_the_first_verdict():  # one at a time: the second request is sent once the first is answered
        deadline = time.monotonic() + 300
        while STATS["requests"] < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        own.process.kill()

    killer = threading.Thread(target=kill_after_the_first_verdict, daemon=True)
    killer.start()
    scores = reward.score(prompts=["What is 7 + 5?"] * n, completions=[f"The answer is {i}." for i in range(n)],
                          answer=["12"] * n, log_metric=lambda key, value: logged.__setitem__(key, value))
    killer.join(5)
    failed = logged["rewards/judge/errors"] + logged["rewards/judge/timeouts"]
    assert 0 < failed < n
    assert sum(s is None for s in scores) >= failed


def test_the_server_stops_when_the_process_that_started_it_is_killed():
    code = ("from grpo_reward_judge.server import start_server; s = start_server(); "
            "print(s.process.pid, flush=True); import time; time.sleep(600)")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.2)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie has exited; only its parent's wait is missing
        return stat.read().split(") ")[1][0] != "Z"
