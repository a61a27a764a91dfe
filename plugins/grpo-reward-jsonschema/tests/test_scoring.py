import json
import socket
import urllib.request

import pytest

from grpo_reward_jsonschema import json_schema_reward
from grpo_reward_jsonschema.validation import MAX_VIOLATIONS, _compile

VALID = {"name": "Ada", "age": 36, "email": "ada@example.org", "tags": ["x"]}


def score(value, schema, **params):
    text = value if isinstance(value, str) else json.dumps(value)
    return json_schema_reward(text, schema, **params)


def test_valid_scores_one_and_unparseable_zero(person_schema):
    assert score(VALID, person_schema) == 1.0
    assert score("I could not find the record.", person_schema) == 0.0
    assert score('{"name": "Ada", "age": 36', person_schema) == 0.0


def test_partial_credit_is_partial_over_violations(person_schema):
    one = {k: v for k, v in VALID.items() if k != "email"}
    two = {k: v for k, v in VALID.items() if k not in ("email", "age")}
    three = {"tags": ["x"]}
    assert score(one, person_schema) == pytest.approx(0.5)
    assert score(two, person_schema) == pytest.approx(0.25)
    assert score(three, person_schema) == 0.0  # none of the required properties: no partial credit
    assert score(one, person_schema, partial=0.2) == pytest.approx(0.2)
    assert score(two, person_schema, partial=0.0) == 0.0


def test_score_falls_as_violations_grow(person_schema):
    broken = dict(VALID)
    scores = [score(broken, person_schema)]
    for key, wrong in [("age", -1), ("tags", "none"), ("email", 5), ("name", None), ("extra", 1)]:
        broken[key] = wrong
        scores.append(score(broken, person_schema))
    assert scores[0] == 1.0
    assert all(later < earlier for earlier, later in zip(scores, scores[1:]))
    assert all(0.0 < s < 1.0 for s in scores[1:])


def test_empty_object_and_wrong_types_earn_nothing_against_required_properties(person_schema):
    assert score({}, person_schema) == 0.0
    for wrong in (42, "Ada", True, None, [VALID], []):
        assert json_schema_reward(json.dumps(wrong), person_schema) == 0.0
    # One required property present is enough for partial credit.
    assert score({"name": "Ada"}, person_schema) > 0.0


def test_violations_are_capped():
    schema = json.dumps({"type": "array", "items": {"type": "string"}})
    many = score(list(range(10 * MAX_VIOLATIONS)), schema)
    assert many == pytest.approx(0.5 / MAX_VIOLATIONS)
    assert many > 0.0


def test_schema_given_as_object_or_text(person_schema):
    assert score(VALID, json.loads(person_schema)) == score(VALID, person_schema) == 1.0
    assert score({"email": "x"}, json.loads(person_schema)) == score({"email": "x"}, person_schema) < 1


def test_boolean_schemas():
    assert score({"anything": 1}, "true") == 1.0
    assert 0.0 < score({"anything": 1}, "false") < 1.0


def test_draft_is_taken_from_dollar_schema():
    # In draft 4 exclusiveMaximum is a boolean modifier of maximum; in 2020-12 it must be a number.
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 5, "exclusiveMaximum": True}
    assert score(4, json.dumps(draft4)) == 1.0
    assert score(5, json.dumps(draft4)) < 1.0
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        score(4, json.dumps({k: v for k, v in draft4.items() if k != "$schema"}))


def test_formats_are_checked_only_when_asked():
    schema = json.dumps({"type": "string", "format": "date"})
    assert score('"not a date"', schema) == 1.0
    assert score('"not a date"', schema, formats=True) < 1.0
    assert score('"2024-02-29"', schema, formats=True) == 1.0


class NetworkUsed(Exception):
    pass


@pytest.fixture
def no_network(monkeypatch):
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise NetworkUsed(f"network access attempted: {args}")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return attempts


REMOTE = {
    "type": "object",
    "properties": {"address": {"$ref": "http://schemas.example.com/address.json"}},
    "required": ["address"],
}


def test_remote_ref_is_not_fetched_and_counts_as_a_violation(no_network):
    schema = json.dumps(REMOTE)
    got = score({"address": {"city": "Oslo"}}, schema)
    assert 0.0 < got < 1.0
    assert got == pytest.approx(0.5)
    assert score({"nothing": 1}, schema) < 1.0  # the missing required property still counts
    assert no_network == []


def test_the_network_guard_would_see_a_fetch(no_network):
    import jsonschema

    # jsonschema's own default registry does try to fetch the reference: the guard sees it.
    with pytest.raises(Exception):
        jsonschema.Draft202012Validator(REMOTE).is_valid({"address": {}})
    assert no_network


def test_meta_schema_refs_resolve_offline(no_network):
    schema = json.dumps({"$ref": "https://json-schema.org/draft/2020-12/schema"})
    assert score({"type": "string"}, schema) == 1.0
    assert score({"type": 12}, schema) < 1.0
    assert no_network == []


@pytest.mark.parametrize(
    "bad, words",
    [
        ('{"type": "strnig"}', "not a valid JSON Schema"),
        ('{"type": "object", "properties": {"a": {"pattern": "(unclosed"}}}', "not a valid JSON Schema"),
        ('{"type": ', "not valid JSON"),
        ("[1, 2]", "is a JSON array, not a JSON Schema"),
        ('{"$schema": "https://example.com/my-dialect", "type": "object"}', "unknown $schema"),
        ('{"$schema": 7}', "not a string"),
    ],
)
def test_invalid_column_schema_is_a_clear_error(bad, words):
    with pytest.raises(ValueError) as error:
        json_schema_reward('{"a": 1}', bad)
    message = str(error.value)
    assert words in message
    assert "column 'schema'" in message
    assert bad[:20] in message


def test_missing_schema_is_a_clear_error():
    with pytest.raises(ValueError, match="column 'schema' is empty"):
        json_schema_reward('{"a": 1}', None)


def test_validators_are_compiled_once_per_schema(person_schema):
    _compile.cache_clear()
    for _ in range(16):
        score(VALID, person_schema)
    assert (_compile.cache_info().misses, _compile.cache_info().hits) == (1, 15)
    for _ in range(16):  # a fresh but equal object each time, as a dataset column of objects gives
        score({"name": 3}, json.loads(person_schema))
    assert (_compile.cache_info().misses, _compile.cache_info().hits) == (2, 30)


def test_gold_and_pairs_do_not_fetch_remote_refs(no_network):
    from grpo_reward_jsonschema import SPEC

    params = SPEC.resolve({})
    columns = {"schema": json.dumps(REMOTE)}
    assert SPEC.checks.gold_example(columns, params) is None  # it cannot be shown valid offline
    optional = json.dumps({"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}})
    gold = SPEC.checks.gold_example({"schema": optional}, params)  # leaves the optional property out
    assert json_schema_reward(gold, optional) == 1.0
    assert no_network == []
