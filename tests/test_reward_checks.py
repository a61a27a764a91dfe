"""RewardSpec groups what only the checks read in RewardChecks; the former flat keywords still work, with a warning."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import warnings

import pytest

import grpo_core
from grpo_core import Direction, RewardChecks, RewardSpec
from grpo_core.checks.run import run_checks


def one(completion: str) -> float:
    return 1.0


def _gold(columns, params):
    return "done"


def _pairs(params):
    from hypothesis import strategies as st

    return st.just(("a", "b", {}))


def test_check_declarations_live_in_one_object_that_training_does_not_need():
    checks = RewardChecks(directions=(Direction("a beats b", _pairs),), gold_example=_gold, degenerate_share=0.2)
    spec = RewardSpec("grouped", "always 1", one, checks=checks)
    assert spec.checks.gold_example is _gold and spec.checks.degenerate_share == 0.2
    assert "checks" in {f.name for f in dataclasses.fields(RewardSpec)}
    assert not {"directions", "rows", "gold", "degenerate", "row_problems"} & {f.name for f in dataclasses.fields(RewardSpec)}
    assert RewardSpec("plain", "always 1", one).checks == RewardChecks()
    assert "checks" in inspect.signature(RewardSpec).parameters
    assert grpo_core.RewardChecks is RewardChecks and RewardChecks.__doc__
    assert pickle.loads(pickle.dumps(spec)).checks.gold_example is _gold


def test_the_flat_check_keywords_are_gone_and_checks_is_the_one_spelling():
    with pytest.raises(TypeError, match="rows"):
        RewardSpec("old", "always 1", one, rows=_pairs)
    assert not hasattr(RewardSpec("plain", "always 1", one), "gold")


def test_the_new_spelling_warns_nothing_and_the_checks_read_it():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec = RewardSpec("grouped", "always 1", one, checks=RewardChecks(gold_example=lambda columns, params: "x",
                                                                          degenerate_share=1.0))
        report = run_checks([grpo_core.Reward(spec, spec.resolve())], max_examples=2, seed=0)
    assert report.result("grouped", "gold").status == "pass"
    assert report.result("grouped", "degenerate").status == "skip"
