"""Completions that do not fill the structure are declared degenerate and scored low, through the adapter."""

import pytest

from grpo_core.testing import call_reward
from grpo_reward_xml import SPEC, gold_completion

PROMPTS = ["What is 4 + 18?", "Solve: a train leaves at 3 pm and travels 60 km/h for 2 hours. How far does it go?"]


@pytest.mark.parametrize("tags", ["reasoning,answer", "think,answer", "think", "plan,work,answer"])
@pytest.mark.parametrize("prefilled", [False, True])
@pytest.mark.parametrize("mode", ["incremental", "soft", "strict"])
def test_degenerate_completions_score_at_most_the_declared_share(tags, prefilled, mode):
    params = SPEC.resolve({"tags": tags, "prefilled": prefilled, "mode": mode})
    low, high = SPEC.bounds
    ceiling = low + SPEC.checks.degenerate_share * (high - low)
    for prompt in PROMPTS:
        declared = SPEC.checks.degenerate(prompt, {}, params)
        labels = [label for label, _ in declared]
        assert len(labels) == len(set(labels)) >= 10
        scores = call_reward(SPEC, [text for _, text in declared], params=params, prompts=[prompt] * len(declared))
        paid = {label: score for (label, _), score in zip(declared, scores) if score > ceiling}
        assert paid == {}, (tags, prefilled, mode)
        # A real structure for the same parameters still earns the top score.
        assert call_reward(SPEC, [SPEC.checks.gold_example({}, params)], params=params) == [high]


def test_the_audit_would_catch_the_old_rule():
    # Before real content was required, '.' inside every element scored 1.0 in every mode.
    params = SPEC.resolve({"min_chars": 1, "min_answer_chars": 1})
    declared = dict(SPEC.checks.degenerate("What is 2 + 2?", {}, params))
    dots = declared["'.' inside every element"]
    assert call_reward(SPEC, [dots], params=params) == [0.25]
    assert call_reward(SPEC, [dots.replace(".", "a")], params=params) == [1.0]


def test_copying_the_question_earns_nothing():
    assert call_reward(SPEC, ["What is 4 + 18?"]) == [0.0]


def test_gold_meets_raised_minimums():
    text = gold_completion("think,answer", min_chars=100, min_answer_chars=5)
    assert call_reward(SPEC, [text], params={"tags": "think,answer", "mode": "strict", "min_chars": 100,
                                              "min_answer_chars": 5}) == [1.0]


@pytest.mark.parametrize("name", ["min_chars", "min_answer_chars"])
def test_minimums_must_be_positive(name):
    from grpo_core import UsageError

    with pytest.raises(UsageError, match=f"{name} must be 1 or more"):
        SPEC.resolve({name: 0})
