"""The filler audit: generated rows hold records that filler cannot match by chance, and real rows where
filler happens to hold most expected values do not count it as a completion that skips the task."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed

from grpo_core.testing import check_reward
from grpo_reward_jsonschema import SPEC
from grpo_reward_jsonschema.degenerate import agreement, blank_instance, degenerate_completions
from grpo_reward_jsonschema.dataset import generate_rows
from grpo_reward_jsonschema.instances import example_instance, informative, valid_example

PARAMS = SPEC.resolve()

# A schema `grpo-run check --seed 5` drew: booleans and a date, where filler writes true and 2024-05-17.
FLAGS_AND_DATE = {
    "type": "object",
    "properties": {"day": {"type": "string", "format": "date"}, "note": {"type": ["string", "null"]},
                   "a": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}},
                   "b": {"type": "boolean"}, "c": {"type": "boolean"}},
    "required": ["day"],
}


def paid_degenerate(row, expected):
    """The declared degenerate completions the reward pays more than 0.5 on ``row``."""
    return [(label, score) for label, text in degenerate_completions("prompt", row, PARAMS)
            if (score := SPEC.func(text, schema=row["schema"], expected=expected, **PARAMS)) > 0.5]


def test_a_generated_record_agrees_with_neither_filler_on_most_fields():
    record = informative(FLAGS_AND_DATE, valid_example(FLAGS_AND_DATE))
    assert agreement(record, example_instance(FLAGS_AND_DATE)) <= 0.5
    assert agreement(record, blank_instance(FLAGS_AND_DATE)) <= 0.5


def test_no_drawn_row_pays_its_declared_degenerate_completions():
    rows = []

    @hypothesis_seed(0)
    @settings(max_examples=100, database=None, suppress_health_check=list(HealthCheck))
    @given(SPEC.checks.column_strategy(PARAMS))
    def draw(row):
        rows.append(row)

    draw()
    paid = [(row, found) for row in rows if (found := paid_degenerate(row, row.get("expected")))]
    assert not paid, f"{len(paid)} of {len(rows)} drawn rows pay filler, e.g. {paid[0]}"


def test_real_rows_never_pay_declared_filler_and_a_validity_only_reward_is_still_caught():
    rows = generate_rows(200, seed=0)  # rows 140 and 170: blank filler holds 2 of 3 expected values
    assert not [i for i, row in enumerate(rows) if paid_degenerate(row, row["expected"])]
    caught = sum(bool(paid_degenerate(row, None)) for row in rows)  # scored without the expected record
    assert caught >= 198


def test_agreement_is_the_share_of_the_record_held_exactly():
    expected = {"status": "pending", "items": [{"product": "mouse", "quantity": 1}], "total": 19.7, "ok": True}
    assert agreement(expected, {"status": "pending", "items": [{"product": "", "quantity": 1}], "total": 0,
                                "ok": True}) == (1 + 0.5 + 0 + 1) / 4
    assert agreement(expected, json.loads(json.dumps(expected))) == 1.0
    assert agreement({"n": 1}, {"n": True}) == 0.0 and agreement([1], "x") == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("seed", [5, 11, 16, 26, 30, 31, 40, 42, 45, 47])
def test_the_full_check_passes_on_the_seeds_that_paid_filler(seed):
    check_reward(SPEC, seed=seed)
