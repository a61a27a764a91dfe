"""Hostile completions: never a crash, always a score inside [0, 1]."""

import json
import time

import pytest

from grpo_reward_jsonschema import json_schema_reward
from grpo_reward_jsonschema.extract import MODES

SCHEMA = json.dumps({
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"$ref": "#"}}, "n": {"type": "integer"}},
})
DEEP_ARRAY = "[" * 10_000 + "]" * 10_000
DEEP_OBJECT = '{"a":' * 10_000 + "1" + "}" * 10_000
HUGE_INT = "1" * 100_000

HOSTILE = {
    "empty": "",
    "whitespace": " \n\t \r\n  ",
    "one megabyte of text": "lorem ipsum " * 90_000,
    "one megabyte of JSON": json.dumps({"n": 1, "items": [{"n": i} for i in range(80_000)]}),
    "one megabyte of open brackets": "[" * 1_000_000,
    "one megabyte of quotes and braces": '{"' * 500_000,
    "one megabyte of fences": "```json\n" * 125_000,
    "lone surrogates": '{"n": 1, "s": "\ud800\udfff\udc00"}\ud83d',
    "escaped lone surrogate": '{"n": 1, "s": "\\ud800"}',
    "control characters": '\x00\x01{"n": 1}\x1b[31m\x7f\u2028',
    "raw control character in a string": '{"n": 1, "s": "a\x00b"}',
    "deep array": DEEP_ARRAY,
    "deep object": DEEP_OBJECT,
    "deep in prose": "answer: " + DEEP_ARRAY + " then {\"n\": 2}",
    "deep in a fence": "```json\n" + DEEP_OBJECT + "\n```",
    "huge integer": HUGE_INT,
    "huge integer in an object": '{"n": ' + HUGE_INT + "}",
    "huge exponent": '{"n": 1e999999}',
    "huge float digits": '{"n": ' + HUGE_INT + ".5}",
    "NaN": '{"n": NaN}',
    "unbalanced": "{[{[}]}]" * 1000,
    "only a quote": '"',
}

VALIDITY_ONLY = {"json-schema": {"expected_column": ""}}  # rows without expected values


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("extract", MODES)
def test_hostile_completion_scores_inside_bounds(name, extract):
    started = time.perf_counter()
    value = json_schema_reward(HOSTILE[name], SCHEMA, extract=extract)
    assert isinstance(value, float)
    assert 0.0 <= value <= 1.0
    assert time.perf_counter() - started < 5  # generous: a guard against quadratic scans, not a benchmark


@pytest.mark.parametrize("name", ["empty", "whitespace", "one megabyte of text", "deep array", "deep object",
                                  "huge integer", "huge integer in an object", "NaN", "one megabyte of open brackets"])
def test_hostile_text_without_usable_json_scores_zero(name):
    assert json_schema_reward(HOSTILE[name], SCHEMA) == 0.0


def test_json_after_a_too_deep_value_is_still_found():
    assert json_schema_reward(HOSTILE["deep in prose"], SCHEMA) == 1.0


def test_deep_nesting_within_the_limit_is_validated_recursively():
    nested = {"n": 0}
    for _ in range(30):
        nested = {"items": [nested]}
    assert json_schema_reward(json.dumps(nested), SCHEMA) == 1.0  # 61 levels, under the default 64
    nested["items"][0] = {"n": "not an integer"}
    assert 0.0 < json_schema_reward(json.dumps(nested), SCHEMA) < 1.0


def test_depth_over_the_parameter_counts_as_unparseable():
    nested = {"n": 0}
    for _ in range(10):
        nested = {"items": [nested]}
    text = json.dumps(nested)
    assert json_schema_reward(text, SCHEMA, max_depth=21) == 1.0
    assert json_schema_reward(text, SCHEMA, max_depth=20) == 0.0


def test_huge_json_over_max_chars_counts_as_unparseable():
    big = json.dumps({"n": 1, "text": "x" * 200_000})
    assert json_schema_reward(big, SCHEMA) == 0.0
    assert json_schema_reward(big, SCHEMA, max_chars=len(big)) == 1.0


def test_numbers_too_large_for_a_float_are_unparseable():
    # 1e999999 and 1e400 overflow to infinity, which JSON cannot state: as unparseable as Infinity.
    assert json_schema_reward(HOSTILE["huge exponent"], SCHEMA) == 0.0
    assert json_schema_reward('{"n": 1e999999}', '{"properties": {"n": {"type": "number"}}}') == 0.0
    assert json_schema_reward("1e400", '{"type": "number"}') == 0.0
    assert json_schema_reward("-1e400", '{"type": "number"}') == 0.0
    assert json_schema_reward("1e300", '{"type": "number"}') == 1.0


def test_surrogates_inside_valid_json_are_scored():
    assert json_schema_reward(HOSTILE["escaped lone surrogate"], SCHEMA) == 1.0
    assert json_schema_reward('{"s": "\ud800"}', '{"properties": {"s": {"pattern": "^.$"}}}') == 1.0


def test_deep_schema_instance_recursion_is_contained():
    # 60 levels of a schema whose every level costs several Python frames.
    schema = json.dumps({"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#"}}]})
    text = "[" * 60 + "1" + "]" * 60
    assert json_schema_reward(text, schema, max_depth=60) == 1.0
    deeper = "[" * 900 + "1" + "]" * 900
    assert 0.0 <= json_schema_reward(deeper, schema, max_depth=1000) <= 1.0


def test_hostile_batch_through_the_adapter_in_both_shapes(registry):
    import grpo_core

    (reward,) = grpo_core.load_rewards(["json-schema"], VALIDITY_ONLY)
    names = sorted(HOSTILE)
    texts = [HOSTILE[name] for name in names]
    plain = reward.score(prompts=[""] * len(texts), completions=texts, schema=[SCHEMA] * len(texts))
    chat = reward.score(prompts=[""] * len(texts), completions=[[{"role": "assistant", "content": t}] for t in texts],
                  schema=[SCHEMA] * len(texts))
    assert plain == chat
    assert all(isinstance(value, float) and 0.0 <= value <= 1.0 for value in plain), dict(zip(names, plain))
