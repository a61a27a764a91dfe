"""One call for a reward: training, the checks and their direct diagnosis pass the same arguments."""

from __future__ import annotations

import json
import os

import pytest

import reward_fixtures as fx
from grpo_core import Direction, Param, Reward, RewardChecks, RewardSpec
from grpo_core.checks.results import FAIL
from grpo_core.checks.run import run_checks
from grpo_core.checks.subject import Item, RewardUnderTest
from grpo_core.testing import token_ids

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
FAST = {"max_examples": 6, "seed": 0}


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    # The checks run rewards in worker processes, which import the fixtures by module name.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [TESTS_DIR, os.environ.get("PYTHONPATH")])))


def _recorder(func):
    return RewardSpec("recorder", "records its calls", func, columns=("answer",),
                      params=(Param("answer_column", "answer", str), Param("path", "", str), Param("scale", 1.0, float)))


def _read(path):
    calls = sorted(path.read_text().splitlines())
    path.unlink()
    return [json.loads(line) for line in calls]


@pytest.mark.parametrize("func", [fx.record_named, fx.record_kwargs], ids=["named", "kwargs"])
@pytest.mark.parametrize("column", ["answer", "solution"], ids=["own-column", "remapped-column"])
def test_training_the_checks_and_their_diagnosis_pass_identical_arguments(tmp_path, func, column):
    log = tmp_path / "calls.jsonl"
    spec = _recorder(func)
    params = spec.resolve({"path": str(log), "scale": 2.0, "answer_column": column})
    reward = Reward(spec, params)
    texts, prompts, answers = ["one", "three"], ["p1", "p2"], ["1", "3"]

    # As TRL calls it in training.
    reward(prompts=prompts, completions=texts, completion_ids=[token_ids(t) for t in texts], trainer_state=None,
           log_metric=lambda *a: None, **{column: answers, "other": ["x", "y"]})
    trained = _read(log)

    check = RewardUnderTest(reward, vary_params=False, item_timeout_s=2.0)
    check.warmed = True  # its warm-up call (an empty completion) is not one of the properties' calls compared here
    try:
        items = [Item(t, {column: a}, p) for t, a, p in zip(texts, answers, prompts)]
        check.call(0, items)  # the properties call the adapter, in a worker process
        checked = _read(log)
        parts = check._parts(reward, items, "plain")
        for index in range(len(items)):
            check._direct(0, parts, index)  # the diagnosis calls the function itself
        diagnosed = _read(log)
    finally:
        check.close()
    assert len(trained) == 2
    assert trained == checked == diagnosed
    if func is fx.record_named:
        assert trained[0] == {"completion": "one", "answer": "1", "scale": 2.0, "prompt": "p1",
                              "completion_ids": token_ids("one")}
    else:  # **kwargs takes every parameter; the column is read from the remapped dataset column
        assert trained[0] == {"completion": "one", "answer": "1", "answer_column": column, "path": str(log),
                              "scale": 2.0}


def test_check_reports_a_third_party_reward_s_own_error():
    spec = RewardSpec("odd", "raises on odd lengths", fx.odd_length_raises, columns=("answer",),
                      params=(Param("answer_column", "answer", str),))
    report = run_checks([Reward(spec, spec.resolve())], vary_params=False, **FAST)
    output = report.result("odd", "output")
    assert output.status == FAIL
    assert "ValueError: cannot grade an odd-length answer" in output.message
    assert "unexpected keyword" not in report.to_json()


def test_a_reward_that_never_scores_fails_output_in_one_sentence():
    spec = RewardSpec("silent", "never scores", fx.never_scores)
    report = run_checks([Reward(spec, spec.resolve())], vary_params=False, **FAST)
    output = report.result("silent", "output")
    assert output.status == FAIL
    assert output.message.startswith("the reward scored nothing: every generated completion scored None")
    assert output.message.count(". ") == 0


def test_a_gold_completion_scored_none_fails_gold():
    spec = RewardSpec("silent-gold", "never scores", fx.never_scores, columns=("answer",),
                      checks=RewardChecks(gold_example=lambda columns, params: "the answer"))
    report = run_checks([Reward(spec, spec.resolve())], vary_params=False, **FAST)
    gold = report.result("silent-gold", "gold")
    assert gold.status == FAIL
    assert "scored None (not scorable): the reward cannot score its own gold example" in gold.message


def _better_and_worse(params):
    from hypothesis import strategies as st

    return st.just(("better", "worse", {}))


def test_a_direction_pair_with_a_none_side_does_not_count_as_held():
    spec = RewardSpec("half-silent", "None for the worse side", fx.none_for_worse,
                      checks=RewardChecks(directions=(Direction("better beats worse", _better_and_worse),)))
    report = run_checks([Reward(spec, spec.resolve())], vary_params=False, **FAST)
    direction = report.result("half-silent", "direction: better beats worse")
    assert direction.status == FAIL
    assert direction.message.startswith("no pair drawn could be compared")
