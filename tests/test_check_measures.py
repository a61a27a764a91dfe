"""A reward's own measured checks (RewardChecks.measures) in the check report with their figures, and a reward
checked only when named (RewardChecks.by_name_only) left out of a check of every installed reward, with why."""

import json

import pytest
from click.testing import CliRunner

from grpo_core import Measure, Reward, RewardChecks, RewardSpec, Unscored, hookimpl
from grpo_core.checks.run import run_checks
from grpo_core.cli import cli
from grpo_core.plugins import registered
from grpo_core.testing import check_reward

CALLS = []


def prefers_long(completion, **kwargs):
    return min(len(completion), 10) / 10


def exact(completion, **kwargs):
    return 1.0 if completion.strip() == "right answer" else 0.0


def agreement(reward):
    scores = reward.score(prompts=["q", "q"], completions=["right answer", "no"])
    CALLS.append(scores)
    return scores[0] > scores[1], f"prefers the right answer in 1 of 1 rows ({scores[0]:g} > {scores[1]:g})"


def pays_padding(reward):
    plain, padded = reward.score(prompts=["q", "q"], completions=["ok", "ok ok ok ok"])
    return not padded > plain, f"padding raised the score in {int(padded > plain)} of 1 compared pairs"


def broken(reward):
    raise KeyError("answer")


MEASURED = RewardSpec("measured", "d", prefers_long, checks=RewardChecks(
    measures=(Measure("agreement", agreement), Measure("length", pays_padding), Measure("broken", broken))))
EXPENSIVE = RewardSpec("expensive", "d", exact, checks=RewardChecks(by_name_only="it calls a paid API"))
CHEAP = RewardSpec("cheap", "d", exact)


class Plugin:
    @hookimpl
    def register_rewards(self, register):
        register(EXPENSIVE)
        register(CHEAP)


def test_measures_are_reported_with_their_figures_and_fail_the_check_when_they_do_not_pass():
    CALLS.clear()
    report = run_checks([Reward(MEASURED, {})], max_examples=3, seed=0)
    results = {r.property: r for r in report.results if r.property.startswith("measured")}
    assert results["measured: agreement"].status == "pass"
    assert results["measured: agreement"].message == "prefers the right answer in 1 of 1 rows (1 > 0.2)"
    assert CALLS == [[1.0, 0.2]]  # the bound reward, scored through its one call path
    assert results["measured: length"].status == "fail"
    assert results["measured: length"].message == "padding raised the score in 1 of 1 compared pairs"
    assert results["measured: broken"].status == "fail"
    assert results["measured: broken"].message == "measuring it raised KeyError: 'answer'"
    assert not report.ok


def test_a_reward_without_measures_has_no_measured_line():
    report = check_reward(CHEAP, max_examples=3, seed=0)
    assert not [r for r in report.results if r.property.startswith("measured")]


def test_checking_every_reward_leaves_out_one_checked_by_name_only_and_says_how_to_check_it(monkeypatch):
    monkeypatch.setenv("GRPO_LOAD_PLUGINS", "")  # these two rewards and the built-ins, whatever else is installed
    with registered(Plugin(), distribution="fixture-dist"):
        every = CliRunner().invoke(cli, ["check", "--max-examples", "3", "--seed", "0", "--json"])
        named = CliRunner().invoke(cli, ["check", "--reward", "expensive", "--max-examples", "3", "--seed", "0",
                                         "--json"])
    assert every.exit_code == 0, every.output
    results = json.loads(every.output)["results"]
    skipped = [r for r in results if r["reward"] == "expensive"]
    assert [(r["property"], r["status"]) for r in skipped] == [("load", "skip")]
    assert skipped[0]["message"] == ("checked only when named (it calls a paid API): grpo-run check --reward "
                                     "expensive")
    assert any(r["reward"] == "cheap" and r["property"] == "bounds" for r in results)
    assert named.exit_code == 0, named.output
    assert {r["property"] for r in json.loads(named.output)["results"] if r["reward"] == "expensive"} >= {"bounds"}


async def async_exact(completions, **columns):
    if any(len(c) > 4_000 for c in completions):  # the longest hostile texts, sized to 256 tokens, are 4,096
        raise ValueError("too long to judge")
    return [Unscored("unscorable", "empty") if not c.strip() else exact(c) for c in completions]


def test_an_async_batched_reward_is_awaited_when_the_checks_call_it_directly_to_say_what_broke():
    report = run_checks([Reward(RewardSpec("async-exact", "d", async_exact, batched=True), {})], max_examples=3,
                        seed=0)
    hostile = next(r for r in report.results if r.property == "hostile")
    assert hostile.status == "fail" and "ValueError: too long to judge" in hostile.message, hostile.message
    assert "coroutine" not in hostile.message
    assert [r.property for r in report.results if r.status == "fail"] == ["hostile"]
