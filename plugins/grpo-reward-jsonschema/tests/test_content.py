"""Content, not only shape: expected values, degenerate completions, loose schemas, hard time limits."""

import json
import math
import time

import pytest

from grpo_core import UsageError
from grpo_core.testing import call_reward, check_reward
from grpo_reward_jsonschema import SPEC, json_schema_reward
from grpo_reward_jsonschema.content import match, normalize_string
from grpo_reward_jsonschema.dataset import generate_rows
from grpo_reward_jsonschema.instances import example_instance

ROWS = generate_rows(300, seed=0)
PERSON = json.dumps({"type": "object", "required": ["name", "age"],
                     "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                                    "tags": {"type": "array", "items": {"type": "string"}}}})


def scored(completions, rows):
    return call_reward(SPEC, completions, schema=[r["schema"] for r in rows], expected=[r["expected"] for r in rows])


def test_expected_record_scores_one_and_schema_fitting_filler_near_zero():
    filler = [json.dumps(example_instance(json.loads(r["schema"]))) for r in ROWS]
    assert scored([r["expected"] for r in ROWS], ROWS) == [1.0] * len(ROWS)
    filler_scores = scored(filler, ROWS)
    assert sum(filler_scores) / len(ROWS) < 0.1
    # Without expected values the same filler is valid JSON: validity alone pays it in full.
    validity = call_reward(SPEC, filler, params={"expected_column": ""}, schema=[r["schema"] for r in ROWS])
    assert validity == [1.0] * len(ROWS)


def test_one_constant_completion_earns_little_across_rows():
    union = {}
    for row in ROWS:
        union.update(example_instance(json.loads(row["schema"])))
    scores = scored([json.dumps(union)] * len(ROWS), ROWS)
    assert sum(scores) / len(ROWS) < 0.1


def test_content_is_the_share_of_expected_fields_matched():
    expected = json.dumps({"name": "Ada Lovelace", "age": 36, "tags": ["a", "b"]})
    assert json_schema_reward('{"name": " ada  LOVELACE", "age": 36.0, "tags": ["b", "a"]}', PERSON, expected) == 1.0
    assert json_schema_reward('{"name": "Ada Lovelace", "age": 37, "tags": ["a", "b"]}', PERSON, expected) == pytest.approx(2 / 3)
    assert json_schema_reward('{"name": "Ada Lovelace", "age": 36, "tags": ["a"]}', PERSON, expected) == pytest.approx(5 / 6)
    assert json_schema_reward('{"name": "Ada Lovelace", "age": 36, "tags": ["a", "b", "c"]}', PERSON, expected) == pytest.approx(8 / 9)
    # Validity gates content: one violation halves it (partial=0.5).
    assert json_schema_reward('{"name": "Ada Lovelace", "age": "36", "tags": ["a", "b"]}', PERSON, expected) == pytest.approx(0.5 * 2 / 3)


def test_normalisation_of_strings_and_numbers():
    assert normalize_string("  Ａda\u00a0\u00a0LOVELACE ") == "ada lovelace"
    assert match("Ada L.", "Ada Lovelace") == 0.0
    assert match(36, 36.0) == match(36, 3.6e1) == match(3.5, 3.50) == 1.0
    assert match(36, 35) == match(1, True) == match(True, 1) == match(36, "36") == 0.0
    assert match(None, None) == match(False, False) == 1.0
    assert match({"a": {"b": 1, "c": 2}}, {"a": {"b": 1}}) == 0.5
    assert match([], []) == match({}, {"x": 1}) == 1.0


def test_empty_object_never_earns_partial_credit_against_required_fields():
    for text in ("{}", "0", "[]", "null", '"N/A"', '{"tags": []}'):
        assert json_schema_reward(text, PERSON) == 0.0, text
    assert json_schema_reward('{"name": "Ada"}', PERSON) == 0.5


def test_infinities_are_unparseable():
    number = json.dumps({"type": "number"})
    for text in ("1e400", "-1e400", "Infinity", "NaN", '{"v": 1e999}'):
        assert json_schema_reward(text, number) == 0.0, text


@pytest.mark.parametrize("expected_column", ["expected", ""])
def test_degenerate_completions_score_at_most_the_declared_share(expected_column):
    params = SPEC.resolve({"expected_column": expected_column})
    low, high = SPEC.bounds
    ceiling = low + SPEC.checks.degenerate_share * (high - low)
    for row in ROWS[:40]:
        prompt = row["prompt"][-1]["content"]
        declared = SPEC.checks.degenerate(prompt, row, params)
        labels = [label for label, _ in declared]
        assert ("schema-fitting filler" in labels) == bool(expected_column)
        texts = [text for _, text in declared]
        columns = {"schema": row["schema"]} | ({"expected": row["expected"]} if expected_column else {})
        scores = call_reward(SPEC, texts, params={"expected_column": expected_column}, prompts=[prompt] * len(texts),
                             **columns)
        paid = {label: score for label, score in zip(labels, scores) if score is None or score > ceiling}
        assert paid == {}, row["schema"]


def test_row_problems_name_loose_schemas_and_bad_expected_values():
    params = SPEC.resolve()
    problems = lambda schema, expected=None: [p for p, _ in SPEC.checks.row_problems(  # noqa: E731
        {"schema": json.dumps(schema), "expected": expected}, params)]
    assert problems({"type": "object", "properties": {"a": {}}, "required": ["a"]}, '{"a": 1}') == []
    assert [p for p in problems({"type": "object", "properties": {"a": {}}, "required": ["a"]})
            if "content is not compared" in p]
    assert any("no top-level type" in p for p in problems({"properties": {"a": {}}, "required": ["a"]}))
    assert any("requires no properties" in p for p in problems({"type": "object", "properties": {"a": {}}}))
    assert any("accepts any JSON" in p for p in problems({}))
    assert any("not JSON" in p for p in problems({"type": "object", "required": ["a"]}, "{oops"))
    for row in ROWS[:50]:
        assert SPEC.checks.row_problems(row, params) == []
    # The problems shown name the schema.
    examples = [example for _, example in SPEC.checks.row_problems({"schema": '{"type": "object"}'}, params)]
    assert examples == ['{"type": "object"}'] * 2  # requires no properties; no expected value


def test_expected_value_that_is_not_json_is_an_error_for_that_row():
    scores = call_reward(SPEC, ['{"name": "Ada", "age": 1}'] * 2, schema=PERSON,
                         expected=['{"name": "Ada", "age": 1}', "{oops"])
    assert scores == [1.0, None]


def test_expected_column_can_be_renamed_or_turned_off():
    renamed = SPEC.resolve({"expected_column": "gold"})
    assert SPEC.required_columns(renamed) == {"schema": "schema", "expected": "gold"}
    scores = call_reward(SPEC, ['{"name": "Ada", "age": 2}'], params={"expected_column": "gold"}, schema=PERSON,
                         gold='{"name": "Ada", "age": 1}')
    assert scores == [0.5]
    assert SPEC.required_columns(SPEC.resolve({"expected_column": ""})) == {"schema": "schema"}


@pytest.mark.parametrize("value", [0, -1, math.nan, math.inf, "nan", "inf"])
def test_timeout_must_be_positive_and_finite(value):
    with pytest.raises(UsageError, match="timeout must be a positive, finite number of seconds"):
        SPEC.resolve({"timeout": value})


def test_spec_declares_a_hard_time_limit():
    assert SPEC.timeout == 5.0 and SPEC.resolve()["timeout"] == 5.0


HOSTILE = {
    # regex answers ^(a+)+$ at once, but backtracks through all 2**n splits of ^(a|a)*$
    "pattern ^(a|a)*$ against 30 characters": (json.dumps({"type": "string", "pattern": "^(a|a)*$"}),
                                               json.dumps("a" * 29 + "!")),
    "uniqueItems on a 47 KB array of objects": (
        json.dumps({"type": "array", "uniqueItems": True}),
        json.dumps([{"id": i, "tags": ["x" * 4, str(i)], "ok": True} for i in range(950)]),
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_schemas_finish_in_bounded_time_with_a_timeout_counted(name):
    schema, completion = HOSTILE[name]
    assert len(completion) >= 30
    from grpo_core import load_rewards

    (warm,) = load_rewards(["json-schema"], {"json-schema": {"expected_column": "", "timeout": 60.0}})
    warm.score(prompts=[""] * 2, completions=["[1]"] * 2, schema=['{"type": "array"}'] * 2)  # workers import jsonschema
    (reward,) = load_rewards(["json-schema"], {"json-schema": {"expected_column": "", "timeout": 0.5}})
    logged = {}
    started = time.monotonic()
    scores = reward.score(prompts=[""] * 2, completions=[completion, '"aaa"' if "pattern" in name else "[1, 2]"],
                    schema=[schema] * 2, log_metric=logged.__setitem__)
    elapsed = time.monotonic() - started
    assert scores[0] in (None, 0.0) and scores[1] == 1.0
    if scores[0] is None:
        assert logged["rewards/json-schema/timeouts"] == 1.0
    assert elapsed < 30  # worker start-up included; without the limit the pattern alone runs for minutes


def test_property_suite_passes():
    check_reward(SPEC, max_examples=10)
