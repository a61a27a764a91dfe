"""The direction pairs, rows and gold answers the property checks use, checked with hypothesis here."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpo_reward_jsonschema import SPEC
from grpo_reward_jsonschema.dataset import generate_rows

PARAM_SETS = [
    {},
    {"extract": "whole"},
    {"extract": "fenced"},
    {"extract": "first"},
    {"partial": 0.0},
    {"partial": 0.9, "formats": True},
]
FAST = settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def resolved(args):
    return SPEC.resolve(args)


def score(completion, columns, params):
    return SPEC.func(completion, **columns, **params)


@pytest.mark.parametrize("args", PARAM_SETS, ids=lambda a: json.dumps(a))
@pytest.mark.parametrize("direction", SPEC.checks.directions, ids=lambda d: d.description[:40])
def test_direction_holds(direction, args):
    params = resolved(args)

    @FAST
    @given(direction.pairs(params))
    def check(pair):
        better, worse, columns = pair
        high, low = score(better, columns, params), score(worse, columns, params)
        assert high > low if direction.strict else high >= low, (better, worse)

    check()


def test_violation_pairs_are_strict_with_partial_credit():
    params = resolved({"expected_column": ""})
    fewer = next(d for d in SPEC.checks.directions if d.description.startswith("fewer"))
    parseable = next(d for d in SPEC.checks.directions if d.description.startswith("parseable"))

    @FAST
    @given(fewer.pairs(params), parseable.pairs(params))
    def check(fewer_pair, parseable_pair):
        for better, worse, columns in (fewer_pair, parseable_pair):
            required = json.loads(columns["schema"]).get("required", [])
            if required and not any(f'"{name}"' in better for name in required):
                continue  # JSON with none of the required properties earns nothing, like {}
            assert score(better, columns, params) > score(worse, columns, params)

    check()


@pytest.mark.parametrize("args", PARAM_SETS, ids=lambda a: json.dumps(a))
def test_gold_scores_the_top_bound(args):
    params = resolved(args)

    @FAST
    @given(SPEC.checks.column_strategy(params))
    def check(columns):
        gold = SPEC.checks.gold_example(columns, params)
        assert gold is not None
        assert score(gold, columns, params) == SPEC.bounds[1]

    check()


def test_gold_for_every_dataset_row():
    params = resolved({"formats": True})
    for row in generate_rows(60, seed=11):
        columns = {"schema": row["schema"]}
        assert score(SPEC.checks.gold_example(columns, params), columns, params) == 1.0


def test_gold_with_a_schema_file(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"type": "object", "properties": {"id": {"type": "integer", "minimum": 10}},
                                "required": ["id"]}))
    params = resolved({"schema": str(path), "expected_column": ""})
    assert SPEC.required_columns(params) == {}
    assert score(SPEC.checks.gold_example({}, params), {}, params) == 1.0


def test_gold_is_none_where_no_instance_can_be_built():
    params = resolved({})
    assert SPEC.checks.gold_example({"schema": json.dumps({"type": "string", "pattern": "^[0-9]{3}$"})}, params) is None
    assert SPEC.checks.gold_example({"schema": "false"}, params) is None
    assert SPEC.checks.gold_example({"schema": json.dumps({"type": "integer"})}, resolved({"extract": "first"})) is None


def test_rows_are_realistic_schemas():
    params = resolved({})
    import jsonschema

    @FAST
    @given(SPEC.checks.column_strategy(params))
    def check(columns):
        schema = json.loads(columns["schema"])
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["required"]

    check()


@given(st.text(max_size=300))
@settings(max_examples=80)
def test_arbitrary_text_is_bounded_and_deterministic(text):
    params = resolved({})
    columns = {"schema": generate_rows(1, seed=0)[0]["schema"]}
    first = score(text, columns, params)
    assert 0.0 <= first <= 1.0
    assert score(text, columns, params) == first


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"id": {"type": "integer"}, "label": {"type": "string"},
                                      "level": {"enum": [1, 2, 3]}}, "required": ["id"]},
    {"type": "array", "items": {"type": "string"}, "minItems": 1},
], ids=["object", "array"])
def test_directions_with_a_schema_file(tmp_path, schema):
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    params = resolved({"schema": str(path), "expected_column": ""})
    for direction in SPEC.checks.directions:

        @settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])
        @given(direction.pairs(params))
        def check(pair):
            better, worse, columns = pair
            assert columns == {}
            high, low = score(better, columns, params), score(worse, columns, params)
            assert high > low if direction.strict else high >= low, (better, worse)

        check()
