"""Reward weight schedules: bounded, monotone where declared, and continuous across a checkpoint (state round-trips)."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grpo_core.errors import UsageError
from grpo_core.settings.syntax import parse_cli_schedule, parse_cli_schedules
from grpo_core.training.schedules import parse_schedule

weights = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)
totals = st.integers(min_value=1, max_value=500)
scores = st.lists(st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.0)), max_size=40)


@settings(max_examples=200)
@given(kind=st.sampled_from(["linear", "cosine"]), start=weights, end=weights, total=totals,
       span=st.integers(min_value=0, max_value=300))
def test_ramps_stay_between_start_and_end_and_move_one_way(kind, start, end, total, span):
    schedule = parse_schedule({"kind": kind, "start": start, "end": end, "steps": span}, "r", 1.0)
    last = (span or total) - 1  # the step that gets the end weight
    values = [schedule.weight(step, total) for step in range(max(total, span) + 5)]
    low, high = min(start, end), max(start, end)
    assert all(low - 1e-9 <= v <= high + 1e-9 for v in values)
    assert values[0] == pytest.approx(start)
    if last > 0:
        assert values[last] == pytest.approx(end) and values[-1] == pytest.approx(end)
    pairs = list(zip(values, values[1:]))
    assert all(b <= a + 1e-9 for a, b in pairs) if end <= start else all(b >= a - 1e-9 for a, b in pairs)


@settings(max_examples=200)
@given(table=st.dictionaries(st.integers(min_value=0, max_value=200), weights, min_size=1, max_size=8),
       base=weights, total=totals)
def test_steps_hold_each_weight_from_its_step_and_are_monotone_when_the_table_is(table, base, total):
    schedule = parse_schedule({"kind": "steps", "weights": table}, "r", base)
    values = [schedule.weight(step, total) for step in range(max(table) + 3)]
    allowed = set(table.values()) | ({base} if min(table) > 0 else set())
    assert set(values) <= allowed
    for at, weight in table.items():
        assert values[at] == weight
    ordered = [table[k] for k in sorted(table)]
    if ordered == sorted(ordered) and (min(table) == 0 or base <= ordered[0]):
        assert values == sorted(values)


adaptive = st.fixed_dictionaries({
    "kind": st.just("adaptive"), "window": st.integers(min_value=1, max_value=64),
    "low": st.floats(min_value=0.0, max_value=0.5), "high": st.floats(min_value=0.5, max_value=1.0),
    "raise_to": weights, "lower_to": weights,
})


@settings(max_examples=200)
@given(declared=adaptive, base=weights, batches=st.lists(scores, max_size=12))
def test_adaptive_weight_is_one_of_its_three_values_and_follows_the_success_rate(declared, base, batches):
    schedule = parse_schedule(declared, "r", base)
    for batch in batches:
        schedule.observe(batch)
        weight = schedule.weight(0, 10)
        assert weight in (base, declared["raise_to"], declared["lower_to"])
        rate = schedule.success_rate()
        assert len(schedule.outcomes) <= declared["window"]
        if rate is not None and rate < declared["low"]:
            assert weight == declared["raise_to"]
        elif rate is not None and rate > declared["high"]:
            assert weight == declared["lower_to"]


@settings(max_examples=200)
@given(declared=adaptive, before=st.lists(scores, max_size=8), after=st.lists(scores, max_size=8))
def test_adaptive_state_round_trips_through_a_checkpoint(declared, before, after):
    """A resumed run continues with the same weights: the state, written as JSON and read back, gives the same future."""
    running = parse_schedule(declared, "r", 1.0)
    for batch in before:
        running.observe(batch)
    resumed = parse_schedule(declared, "r", 1.0)
    resumed.restore(json.loads(json.dumps(running.state())))
    assert resumed.weight(0, 1) == running.weight(0, 1)
    for batch in after:
        running.observe(batch)
        resumed.observe(batch)
        assert resumed.weight(0, 1) == running.weight(0, 1)
        assert resumed.state() == running.state()


def test_adaptive_defaults_follow_the_recipe():
    schedule = parse_schedule("adaptive", "math", 1.5, bounds=(0.0, 1.0))
    assert schedule.describe() == {"kind": "adaptive", "window": 32, "low": 0.3, "high": 0.8, "raise_to": 3.0,
                                   "lower_to": 0.75, "success": 1.0}
    schedule.observe([1.0] * 2 + [0.0] * 8)  # 20% right: raised
    assert schedule.weight(0, 1) == 3.0
    schedule.observe([1.0] * 30)  # the last 32: 30 right of 32, above 0.8: lowered
    assert schedule.weight(0, 1) == 0.75
    schedule.observe([1.0] * 4 + [0.0] * 8)  # 24 of 32 = 0.75, between the thresholds: kept
    assert schedule.weight(0, 1) == 0.75


def test_command_line_spellings():
    assert parse_cli_schedules(["math=adaptive", "xml-format=linear:start=1,end=0.2", "length=0.5",
                                "json-schema={kind: steps, weights: {0: 1, 10: 0.5}}"]) == {
        "math": {"kind": "adaptive"},
        "xml-format": {"kind": "linear", "start": 1, "end": 0.2},
        "length": 0.5,
        "json-schema": {"kind": "steps", "weights": {0: 1, 10: 0.5}},
    }
    assert parse_cli_schedule("steps:0=1,20=0.3", "m") == {"kind": "steps", "weights": {0: 1, 20: 0.3}}
    assert parse_cli_schedule("cosine:start=2,end=0,steps=40", "m") == {"kind": "cosine", "start": 2, "end": 0,
                                                                        "steps": 40}


@pytest.mark.parametrize("declared, expected", [
    ({"kind": "exponential"}, "unknown kind 'exponential'; use one of linear, cosine, steps, adaptive"),
    ({"kind": "linear", "start": 1.0}, "kind linear needs 'end'"),
    ({"kind": "linear", "start": 1.0, "end": 0.2, "stop": 3}, "'stop' is not a field of kind linear"),
    ({"kind": "adaptive", "low": 0.9, "high": 0.2}, "low=0.9 is above high=0.2"),
    ({"kind": "adaptive", "low": 30}, "'low' is 30; it is a success rate, between 0 and 1"),
    ({"kind": "adaptive", "window": 0}, "'window' must be a whole number >= 1, got 0"),
    ({"kind": "cosine", "start": -1, "end": 0}, "'start' is -1; a weight must be >= 0"),
    ({"kind": "steps", "weights": [1, 2]}, "'weights' must map a step to the weight from that step on"),
    ([1, 2], "must be a mapping like {kind: linear"),
])
def test_bad_schedules_name_the_value(declared, expected):
    with pytest.raises(UsageError) as error:
        parse_schedule(declared, "math", 1.0)
    assert expected in str(error.value) and "reward_schedules of 'math'" in str(error.value)


def test_a_number_is_a_fixed_weight():
    assert parse_schedule(2.0, "math", 1.0) is None
    with pytest.raises(UsageError, match="weight must be >= 0"):
        parse_schedule(-1, "math", 1.0)
    assert math.isclose(parse_schedule({"kind": "linear", "start": 1, "end": 0}, "m", 1.0).weight(0, 1), 1.0)
