"""grpo-core's property suite on this reward with dataset rows and a schema file (with row schemas: test_plugin.py),
and on broken copies of it that the suite must catch."""

import dataclasses
import json

import pytest

from grpo_core.testing import check_reward
from grpo_reward_jsonschema import SPEC, json_schema_reward
from grpo_reward_jsonschema.dataset import generate_rows


def test_the_suite_passes_on_dataset_rows():
    check_reward(SPEC, max_examples=8, seed=4, rows=generate_rows(10, seed=4), vary_params=False)


def test_the_suite_passes_with_a_schema_file(tmp_path):
    path = tmp_path / "ticket.json"
    path.write_text(json.dumps({
        "type": "object",
        "properties": {"id": {"type": "integer"}, "priority": {"enum": ["low", "high"]}},
        "required": ["id"],
    }))
    check_reward(SPEC, {"schema": str(path)}, max_examples=8, seed=5, vary_params=False)


def inverted(completion, schema=None, **params):
    """The classic wrong-sign bug: 1 minus the right score."""
    return 1.0 - json_schema_reward(completion, schema, **params)


def all_or_nothing_for_parse(completion, schema=None, **params):
    """Rewards parsing only: invalid JSON scores as high as valid JSON."""
    return 0.0 if json_schema_reward(completion, schema, **params) == 0.0 else 1.0


@pytest.mark.parametrize("func, broken", [
    (inverted, 0),  # valid over invalid
    (all_or_nothing_for_parse, 0),
    (inverted, 2),  # parseable over unparseable
])
def test_the_directions_catch_a_broken_reward(func, broken):
    from hypothesis import given, settings

    direction = SPEC.checks.directions[broken]
    params = SPEC.resolve({})
    violations = []

    @settings(max_examples=20, database=None)
    @given(direction.pairs(params))
    def run(pair):
        better, worse, columns = pair
        high, low = func(better, **columns, **params), func(worse, **columns, **params)
        if not (high > low if direction.strict else high >= low):
            violations.append(pair)

    run()
    assert violations
