"""A property is one record in the registry: registered once, it is planned, run, worded and reported in its
place, with nothing else to edit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import grpo_core
from grpo_core import Reward, RewardSpec
from grpo_core.checks import command
from grpo_core.checks.catalogue import REGISTRY as PROPERTIES
from grpo_core.checks.report import format_report
from grpo_core.checks.run import run_checks
from grpo_core.checks.catalogue import REGISTRY
from grpo_core.checks.registry import Property, Registry
from grpo_core.checks.run import DEFAULT_MAX_EXAMPLES
from grpo_core.checks.search import search, violation


def _one_and_a_half():
    # A local function cannot go to a worker process, so the checks call it in a thread: quick to start.
    return RewardSpec("one-and-a-half", "1.5 for anything", lambda completion: 1.5, bounds=(0.0, 2.0))


def _at_most_one(prop, subject, inputs, deadline):
    def check_scores(example):
        vi, items, shape = example
        outcome = subject.call(vi, items, shape)
        for item, score in zip(items, outcome.scores or []):
            if score is not None and score > 1:
                raise violation(prop, subject, f"{item.text!r} scored {score!r}", subject.example(vi, items, shape))

    return search(prop.name, subject, inputs, inputs.batches(), check_scores, deadline)


def _seen(prop, subject, inputs, deadline, target):
    return subject.result(f"{prop.name}: {target[0]}", "pass", f"target {target[1]}")


def _never_called(prop, subject, inputs, deadline):
    raise AssertionError("a property the reward does not declare must not run")


NEW = (
    (Property("at-most-one", "no score is above 1", _at_most_one), "shapes"),
    (Property("each", "every target is seen", _seen, targets=lambda subject: [("a", ("a", 1)), ("b", ("b", 2))]),
     "at-most-one"),
    (Property("needs-x", "x holds", _never_called, declare="declare one like this: checks=RewardChecks(x=...)",
              declared=lambda spec: False, undeclared="the reward declares no x"), "degenerate"),
)


@pytest.fixture
def registered_properties():
    for prop, after in NEW:
        REGISTRY.register(prop, after=after)
    try:
        yield
    finally:
        for prop, _ in NEW:
            REGISTRY.unregister(prop.name)


def test_a_registered_property_is_planned_run_worded_and_reported_in_its_place(registered_properties):
    assert list(PROPERTIES)[list(PROPERTIES).index("shapes"):] == [
        "shapes", "at-most-one", "each", "hostile", "degenerate", "needs-x", "pays-gold", "equivalent-forms",
        "near-miss", "one-answer", "json-constants", "empty-tags", "state", "penalty", "rows", "time"]
    spec = _one_and_a_half()  # no columns, so no rows line
    report = run_checks([Reward(spec, {})], max_examples=3, seed=0, vary_params=False)
    ran = [r.property for r in report.results]
    assert ran == ["output", "bounds", "gold", "direction", "degenerate", "deterministic", "batch-independent",
                   "shapes", "at-most-one", "each: a", "each: b", "hostile", "needs-x", "time"]
    found = report.result("one-and-a-half", "at-most-one")
    assert found.status == "fail"
    assert found.message.startswith("at-most-one violated: no score is above 1; ") and "scored 1.5" in found.message
    assert [report.result("one-and-a-half", f"each: {t}").message for t in "ab"] == ["target 1", "target 2"]
    assert report.result("one-and-a-half", "needs-x").message == "the reward declares no x"
    assert ("one-and-a-half / needs-x: not checked, the reward declares none; declare one like this: "
            "checks=RewardChecks(x=...)") in report.unchecked()
    text = format_report(report, width=120)
    lines = [line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│")]
    assert lines == ["output", "bounds", "gold", "direction", "deterministic", "batch-independent", "shapes",
                     "at-most-one", "each", "hostile", "degenerate", "needs-x", "time"]
    assert re.search(r"│ each +│ +pass 2/2 +│", text)
    assert "one-and-a-half / at-most-one\n  at-most-one violated: no score is above 1;" in text


def test_unregistering_a_property_takes_it_out_of_the_catalogue(registered_properties):
    REGISTRY.unregister("each")
    assert "each" not in PROPERTIES and "at-most-one" in PROPERTIES
    REGISTRY.register(NEW[1][0], after="at-most-one")  # the fixture unregisters it again


def test_a_property_runs_in_its_stage_and_runs_before_moves_it_in_the_plan_only():
    def noop(prop, subject, inputs, deadline):
        return None

    registry = Registry(Property("a", "", noop), Property("b", "", noop, runs_before="a"),
                        Property("last", "", noop, stage="last"), Property("first", "", noop, stage="first"))
    assert list(registry) == ["first", "a", "b", "last"]
    subject = type("Subject", (), {"spec": None})()
    assert [p.name for p in registry.plan(subject)] == ["first", "b", "a", "last"]


@pytest.mark.parametrize("record, after, message", [
    (Property("output", "", _at_most_one), None, "a property named 'output' is already registered"),
    (Property("new", "", _at_most_one), "outptu", "names 'outptu', which is not registered"),
    (Property("new", "", _at_most_one, runs_before="outptu"), None, "names 'outptu', which is not registered"),
])
def test_a_registration_that_cannot_work_is_refused_in_one_sentence(record, after, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        REGISTRY.register(record, after=after)
    assert list(REGISTRY)[-1] == "time"


def test_a_record_that_would_skip_without_saying_why_is_refused():
    with pytest.raises(ValueError, match="declares `declared` without `undeclared`"):
        Property("x", "", _at_most_one, declared=lambda spec: False)
    with pytest.raises(ValueError, match="stage='early'"):
        Property("x", "", _at_most_one, stage="early")


def test_the_default_number_of_examples_is_defined_once():
    package = Path(grpo_core.__file__).parent
    defined = [path.relative_to(package).as_posix() for path in package.rglob("*.py")
               if re.search(r"^DEFAULT_MAX_EXAMPLES\s*=", path.read_text(encoding="utf-8"), re.M)]
    assert defined == ["checks/run.py"]
    option = next(p for p in command.check.params if p.name == "max_examples")
    assert option.default == DEFAULT_MAX_EXAMPLES
