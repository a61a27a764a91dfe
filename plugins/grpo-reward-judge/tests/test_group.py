"""Group mode (reward judge-group): verdicts read as per-completion scores or a ranking, completions grouped by
prompt, against the fault-injecting server (fixed verdicts) and, in the slow tests, the real embedded judge."""

from fractions import Fraction

import pytest
from grpo_core import UsageError, load_rewards
from grpo_reward_judge.client import STATS
from grpo_reward_judge.group import read_ranking, read_scores


def _load(server, **params):
    [reward] = load_rewards(["judge-group"], {"judge-group": {"base_url": server.url, "model": "m", **params}})
    return reward


def _score(reward, prompts, completions, answers=None):
    logged = {}
    scores, reasons = reward.score_with_reasons(prompts=prompts, completions=completions,
                                                answer=answers or ["12"] * len(prompts),
                                                log_metric=lambda key, value: logged.__setitem__(key, value))
    return scores, reasons, logged


def _shown(request):
    return request["body"]["messages"][0]["content"]


def test_score_lines_are_read_per_completion_onto_the_scale_exactly():
    scale = (1, 10)
    assert read_scores("1: 10\n2: 1\n3: 4", 3, scale) == {0: 1, 1: 0, 2: Fraction(1, 3)}
    assert read_scores("Answer 1: 8/10\n- Answer 2 - 5\n**3.** 7", 3, scale) == {
        0: Fraction(7, 9), 1: Fraction(4, 9), 2: Fraction(2, 3)}
    assert read_scores("1: 12\n2: 3/5\n4: 7", 3, scale) == {}  # off the scale, not out of 10, no answer 4
    assert read_scores("1: 7\n1: 9\n2: 9", 2, scale) == {1: Fraction(8, 9)}  # answer 1 scored twice differently
    assert read_scores("They are all good.", 3, scale) == {} and read_scores("1.5", 3, scale) == {}


def test_a_ranking_is_spread_evenly_with_ties_sharing_their_positions():
    assert read_ranking("3 > 1 > 2", 3) == {2: 1, 0: Fraction(1, 2), 1: 0}
    assert read_ranking("Ranking: 2 = 4 > 1 > 3", 4) == {1: Fraction(5, 6), 3: Fraction(5, 6), 0: Fraction(1, 3),
                                                         2: 0}
    assert read_ranking("Answer 2 > Answer 1", 2) == {1: 1, 0: 0}
    assert read_ranking("3 > 1", 4) == {2: 1, 0: Fraction(2, 3)}  # partial: positions from the top
    assert read_ranking("5 > 1 > 2", 3) == {} and read_ranking("1 > 2 > 1", 3) == {} and read_ranking("2", 3) == {}
    assert read_ranking("Not 4 > 1, but 2 > 1 > 3", 3) == {1: 1, 0: Fraction(1, 2), 2: 0}  # the first valid chain


def test_interleaved_prompts_are_judged_as_one_request_per_group(judge_plugin, faults):
    server = faults(verdict="1: 10\n2: 1\n3: 4")
    reward = _load(server)
    prompts = ["What is 7 + 5?", "What is 2 + 2?"] * 3
    completions = ["a1", "b1", "a2", "b2", "a3", "b3"]
    scores, reasons, logged = _score(reward, prompts, completions, ["12", "4"] * 3)
    assert scores == [1.0, 1.0, 0.0, 0.0, 1 / 3, 1 / 3] and reasons == [None] * 6
    assert len(server.requests) == 2
    first, second = sorted((_shown(r) for r in server.requests), key=lambda text: "Answer 1:\nb1" in text)
    assert "Answer 1:\na1\n\nAnswer 2:\na2\n\nAnswer 3:\na3" in first and "Reference answer: 12" in first
    assert "Answer 1:\nb1\n\nAnswer 2:\nb2\n\nAnswer 3:\nb3" in second and "Reference answer: 4" in second
    assert logged["rewards/judge-group/retries"] == 0.0


def test_a_ranking_verdict_scores_the_group_by_rank(judge_plugin, faults):
    server = faults(verdict="2 > 3 > 1")
    reward = _load(server, verdict="ranking")
    scores, _, _ = _score(reward, ["q"] * 3, ["x", "y", "z"])
    assert scores == [0.0, 1.0, 0.5]
    assert "separated by `>`" in _shown(server.requests[0])


def test_completions_a_verdict_leaves_out_are_unscored_and_counted(judge_plugin, faults):
    server = faults(verdict="1: 10\n3: 1")
    scores, reasons, logged = _score(_load(server), ["q"] * 4, ["w", "x", "y", "z"])
    assert scores == [1.0, None, 0.0, None]
    assert reasons == [None, "unscorable", None, "unscorable"] and logged["rewards/judge-group/unscorable"] == 2.0


def test_an_unreadable_verdict_leaves_the_whole_group_unscored(judge_plugin, faults):
    server = faults(verdict="They are all quite good.")
    scores, reasons, logged = _score(_load(server, verdict="ranking"), ["q"] * 3, ["x", "y", "z"])
    assert scores == [None] * 3 and reasons == ["unscorable"] * 3
    assert logged["rewards/judge-group/unscorable"] == 3.0


def test_a_group_of_one_is_scored_pointwise(judge_plugin, faults):
    server = faults(verdict="7")
    scores, _, _ = _score(_load(server), ["What is 7 + 5?", "What is 2 + 2?"], ["12", "4"], ["12", "4"])
    assert scores == [2 / 3, 2 / 3]
    assert all("Student answer:" in _shown(r) and "Answer 1:" not in _shown(r) for r in server.requests)


def test_both_orders_asks_the_group_reversed_too_and_averages(judge_plugin, faults):
    server = faults(verdict="1: 10\n2: 1")  # a judge that always prefers the first answer shown
    scores, _, _ = _score(_load(server, both_orders=True), ["q"] * 2, ["x", "y"])
    assert scores == [0.5, 0.5]
    assert sorted(_shown(r).index("\ny\n") < _shown(r).index("\nx\n") for r in server.requests) == [False, True]
    plain, _, _ = _score(_load(server, both_orders=False, cache=False), ["q"] * 2, ["x", "y"])
    assert plain == [1.0, 0.0]


def test_the_cache_keeps_the_order_shown(judge_plugin, faults):
    server = faults(verdict="1: 10\n2: 1")
    reward = _load(server)
    assert _score(reward, ["q"] * 2, ["x", "y"])[0] == [1.0, 0.0]
    assert _score(reward, ["q"] * 2, ["x", "y"])[0] == [1.0, 0.0]
    assert len(server.requests) == 1 and STATS["cache_hits"] == 1
    assert _score(reward, ["q"] * 2, ["y", "x"])[0] == [1.0, 0.0]
    assert len(server.requests) == 2


def test_group_mode_is_declared_group_relative_and_judge_is_not(judge_plugin):
    group, single = load_rewards(["judge-group", "judge"], {"judge-group": {"base_url": "http://x", "model": "m"},
                                                            "judge": {"base_url": "http://x", "model": "m"}})
    assert group.spec.group_relative and not single.spec.group_relative
    assert group.columns == {"answer": "answer"}
    with pytest.raises(UsageError, match="verdict.*scores, ranking"):
        load_rewards(["judge-group"], {"judge-group": {"verdict": "stars"}})
    with pytest.raises(UsageError, match="unknown group rubric 'tone'"):
        load_rewards(["judge-group"], {"judge-group": {"rubric": "tone"}})


def test_order_consistency_counts_the_groups_whose_winner_moved_with_the_order(judge_plugin, faults):
    from grpo_reward_judge.group import order_consistency

    first_wins = order_consistency(_load(faults(verdict="1: 10\n2: 1\n3: 1")), groups=4)
    assert not first_wins.ok
    assert first_wins.figure == ("the winner changed in 4 of 4 groups when the order was reversed; "
                                 "the answer shown first won 8 of 8 times")
    averaged = order_consistency(_load(faults(verdict="1: 10\n2: 1\n3: 1"), both_orders=True), groups=4)
    assert averaged.ok and averaged.figure.startswith("the winner changed in 0 of 4 groups")
    unread = order_consistency(_load(faults(verdict="no idea")), groups=2)
    assert not unread.ok and unread.figure.endswith("; 2 groups had an unscored completion")


@pytest.mark.slow
@pytest.mark.parametrize("verdict", ["scores", "ranking"])
def test_the_embedded_judge_scores_a_batch_of_two_groups_with_one_request_each(judge_plugin, verdict):
    from grpo_reward_judge.server import embedded_server

    embedded_server()  # one per process, stopped at exit
    [reward] = load_rewards(["judge-group"], {"judge-group": {"verdict": verdict, "max_tokens": 16}})
    args = {"prompts": ["What is 7 + 5?", "What is 2 + 2?"] * 3, "answer": ["12", "4"] * 3,
            "completions": ["The answer is 12.", "It is 4.", "The answer is 15.", "It is 5.", "I do not know.", "4"]}
    scores, reasons = reward.score_with_reasons(**args)
    assert all(s is None and r == "unscorable" or 0.0 <= s <= 1.0 and r is None for s, r in zip(scores, reasons))
    assert STATS["requests"] == 2
    assert reward.score_with_reasons(**args) == (scores, reasons)
    assert STATS["requests"] == 2 and STATS["cache_hits"] == 2
