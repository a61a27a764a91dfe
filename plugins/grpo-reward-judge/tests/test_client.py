"""The judge's requests against a fault-injecting server: retries, failures counted, the key from the environment."""

import pytest
from grpo_core import RewardError, load_rewards
from grpo_core.testing import free_port
from grpo_reward_judge.client import STATS
from grpo_reward_judge.rubrics import Rubric, get_rubric


def _score(reward, n=1):
    logged = {}
    scores = reward.score(prompts=["What is 7 + 5?"] * n, completions=["The answer is 12."] * n, answer=["12"] * n,
                    log_metric=lambda key, value: logged.__setitem__(key, value))
    return scores, logged


def test_a_verdict_on_the_scale_maps_to_the_bounds_exactly():
    rubric = get_rubric("correctness")
    assert rubric.read("7") == 2 / 3
    assert rubric.read("Score: 8/10") == 7 / 9
    assert rubric.read("10") == 1.0 and rubric.read("1") == 0.0
    assert rubric.read("12") is None and rubric.read("3/5") is None and rubric.read("excellent") is None
    choice = Rubric("yes-no", "{completion}?", scale=None, choices={"yes": 1.0, "no": 0.0})
    assert choice.read("No, it is wrong.") == 0.0 and choice.read("Yes.") == 1.0 and choice.read("maybe") is None


def test_the_rubric_template_names_the_columns_the_reward_needs(judge_plugin):
    [reward] = load_rewards(["judge"], {"judge": {"base_url": "http://127.0.0.1:9", "model": "m"}})
    assert reward.columns == {"answer": "answer"}
    [reward] = load_rewards(["judge"], {"judge": {"rubric": "concision", "base_url": "http://x", "model": "m"}})
    assert reward.columns == {}


def test_500_three_times_then_200_is_scored_with_the_retries_counted(judge_plugin, faults):
    server = faults(script=[500, 503, 500], verdict="7")
    [reward] = load_rewards(["judge"], {"judge": {"base_url": server.url, "model": "m", "retries": 3}})
    scores, logged = _score(reward)
    assert scores == [2 / 3]
    assert STATS["retries"] == 3 and STATS["requests"] == 4 and len(server.requests) == 4
    assert logged["rewards/judge/errors"] == 0.0 and logged["rewards/judge/retries"] == 3.0


def test_a_request_that_still_fails_is_counted_as_an_error_not_scored_0(judge_plugin, faults):
    server = faults(script=[500] * 10)
    [reward] = load_rewards(["judge"], {"judge": {"base_url": server.url, "model": "m", "retries": 1}})
    scores, logged = _score(reward, n=2)
    assert scores == [None, None] and logged["rewards/judge/errors"] == 2.0


def test_a_refused_request_is_not_tried_again(judge_plugin, faults):
    server = faults(script=[400])
    [reward] = load_rewards(["judge"], {"judge": {"base_url": server.url, "model": "m", "retries": 3}})
    scores, logged = _score(reward)
    assert scores == [None] and len(server.requests) == 1 and logged["rewards/judge/errors"] == 1.0


def test_a_slow_answer_is_counted_as_a_timeout(judge_plugin, faults):
    server = faults(delay_s=1.0)
    [reward] = load_rewards(["judge"], {"judge": {"base_url": server.url, "model": "m", "retries": 0,
                                                  "timeout": 0.2}})
    scores, logged = _score(reward)
    assert scores == [None] and logged["rewards/judge/timeouts"] == 1.0


def test_an_unreadable_verdict_is_counted_as_unscorable(judge_plugin, faults):
    server = faults(verdict="I think it is good.")
    [reward] = load_rewards(["judge"], {"judge": {"base_url": server.url, "model": "m"}})
    scores, logged = _score(reward)
    assert scores == [None] and logged["rewards/judge/unscorable"] == 1.0


def test_a_server_that_cannot_be_reached_stops_the_batch_naming_its_url(judge_plugin):
    url = f"http://127.0.0.1:{free_port()}"
    [reward] = load_rewards(["judge"], {"judge": {"base_url": url, "model": "m", "retries": 0}})
    with pytest.raises(RewardError, match=url.replace(".", r"\.")):
        _score(reward, n=2)


def test_the_key_is_read_from_the_named_variable_and_is_no_parameter(judge_plugin, faults, monkeypatch):
    server = faults()
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-secret-123")
    [reward] = load_rewards(["judge"], {"judge": {"base_url": server.url, "model": "m",
                                                  "api_key_env": "MY_JUDGE_KEY"}})
    _score(reward)
    assert server.requests[0]["authorization"] == "Bearer sk-secret-123"
    assert "sk-secret-123" not in repr(reward.params)
    body = server.requests[0]["body"]
    assert body["temperature"] == 0.0 and body["max_tokens"] == 8 and "12" in body["messages"][0]["content"]


def test_the_cache_answers_a_second_scoring_without_a_request(judge_plugin, faults):
    server = faults(verdict="9")
    [reward] = load_rewards(["judge"], {"judge": {"base_url": server.url, "model": "m"}})
    first, _ = _score(reward, n=3)
    second, _ = _score(reward, n=3)
    assert first == second == [8 / 9] * 3
    assert len(server.requests) == 1 and STATS["cache_hits"] == 1  # 3 identical items: asked once, then cached


def test_the_timeout_bounds_a_verdict_with_its_retries(judge_plugin, faults):
    import time

    server = faults(script=[500] * 50, delay_s=0.3)
    [reward] = load_rewards(["judge"], {"judge": {"base_url": server.url, "model": "m", "retries": 20,
                                                  "timeout": 1.0}})
    started = time.monotonic()
    scores, logged = _score(reward)
    assert time.monotonic() - started < 2.5  # 21 tries of 0.3 s and their backoff would take over 10 s
    assert scores == [None] and logged["rewards/judge/timeouts"] == 1.0 and logged["rewards/judge/errors"] == 0.0
    assert 2 <= len(server.requests) <= 4


def test_a_completion_with_a_lone_surrogate_is_judged_not_a_crash(judge_plugin, faults):
    server = faults(verdict="4")
    [reward] = load_rewards(["judge"], {"judge": {"base_url": server.url, "model": "m"}})
    assert reward.score(prompts=["q"], completions=["12 \ud800"], answer=["12"]) == [1 / 3]
    assert reward.score(prompts=["q"], completions=["12 \ud800"], answer=["12"]) == [1 / 3]  # from the cache
    assert len(server.requests) == 1
