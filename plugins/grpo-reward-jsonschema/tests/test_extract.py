import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grpo_reward_jsonschema.extract import NO_JSON, exceeds_depth, extract_json

OBJ = {"name": "Ada", "age": 36}
TEXT = json.dumps(OBJ)


@pytest.mark.parametrize(
    "mode, text, expected",
    [
        ("whole", TEXT, OBJ),
        ("whole", f"  \n{TEXT}\n ", OBJ),
        ("whole", f"Here it is: {TEXT}", NO_JSON),
        ("whole", f"```json\n{TEXT}\n```", NO_JSON),
        ("whole", "42", 42),
        ("whole", "null", None),
        ("fenced", f"Sure.\n```json\n{TEXT}\n```\nDone.", OBJ),
        ("fenced", f"```JSON\n{TEXT}\n```", OBJ),
        ("fenced", f"```\n{TEXT}\n```", OBJ),
        ("fenced", f"```json {TEXT}```", OBJ),
        ("fenced", f"````json\n{TEXT}\n````", OBJ),
        ("fenced", f"```python\nx = 1\n```\n```json\n{TEXT}\n```", OBJ),
        ("fenced", TEXT, NO_JSON),
        ("fenced", f"```json\n{TEXT}", NO_JSON),  # the fence never closes
        ("first", f"Here it is: {TEXT} -- hope that helps", OBJ),
        ("first", f"Use {{braces}} like this: {TEXT}", OBJ),  # {braces} fails to parse and is skipped
        ("first", 'See [the docs](https://example.com). ' + TEXT, OBJ),
        ("first", 'prose with "quotes" then {"a": "}"}', {"a": "}"}),
        ("first", "[1, 2, 3] and then " + TEXT, [1, 2, 3]),
        ("first", "42", NO_JSON),  # only objects and arrays are searched for
        ("first", '{"outer": {"inner": 1}, "cut": ', NO_JSON),  # truncated: inner values earn nothing
        ("auto", TEXT, OBJ),
        ("auto", f"```json\n{TEXT}\n```", OBJ),
        ("auto", f"The answer: {TEXT}.", OBJ),
        ("auto", '```json\n{"broken": }\n```\nfixed: {"ok": true}', {"ok": True}),
        ("auto", "no json here", NO_JSON),
    ],
)
def test_modes(mode, text, expected):
    found = extract_json(text, mode)
    if expected is NO_JSON:
        assert found is NO_JSON
    else:
        assert found == expected


def test_auto_prefers_whole_then_fence_then_first():
    fenced_then_other = '{"x": 1} ```json\n{"y": 2}\n```'
    assert extract_json(fenced_then_other, "auto") == {"y": 2}
    assert extract_json(fenced_then_other, "first") == {"x": 1}
    assert extract_json('{"z": 3}', "auto") == {"z": 3}


@pytest.mark.parametrize("mode", ["whole", "first", "auto"])
def test_reasoning_before_think_close_is_left_out(mode):
    text = f"<think>The fields are [1, 2] and {{\"draft\": true}}.</think>\n{TEXT}"
    assert extract_json(text, mode) == OBJ
    assert extract_json("<think>only reasoning {\"a\": 1}</think>", mode) is NO_JSON


def test_json_tagged_fence_beats_untagged():
    text = '```\n{"untagged": 1}\n```\n```json\n{"tagged": 1}\n```'
    assert extract_json(text, "fenced") == {"tagged": 1}


def test_size_limit():
    big = json.dumps({"text": "x" * 500})
    for mode in ("whole", "first", "auto"):
        assert extract_json(big, mode, max_chars=len(big)) == {"text": "x" * 500}
    assert extract_json(f"prose {big} prose", "first", max_chars=len(big)) == {"text": "x" * 500}
    for mode in ("whole", "first", "auto"):
        assert extract_json(big, mode, max_chars=len(big) - 1) is NO_JSON


def test_depth_limit():
    nested = "[" * 10 + "]" * 10
    assert extract_json(nested, "whole", max_depth=10) is not NO_JSON
    for mode in ("whole", "first", "fenced", "auto"):
        text = f"```json\n{nested}\n```" if mode == "fenced" else nested
        assert extract_json(text, mode, max_depth=9) is NO_JSON


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_constants_are_rejected(constant):
    assert extract_json(f'{{"a": {constant}}}', "auto") is NO_JSON


def test_integer_over_python_digit_limit_is_unparseable():
    assert extract_json("1" * 4000, "whole") == int("1" * 4000)
    assert extract_json("1" * 100_000, "whole") is NO_JSON
    assert extract_json("[" + "1" * 100_000 + "]", "first") is NO_JSON


def _depth_brute_force(text):
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab[]{}"\\ '),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(alphabet='k[{"\\'), children, max_size=3),
    max_leaves=30,
)


@given(json_values, st.integers(0, 8))
@settings(max_examples=60)
def test_exceeds_depth_matches_a_character_scan(value, limit):
    text = json.dumps(value)
    assert exceeds_depth(text, limit) == (_depth_brute_force(text) > limit)
    limit = max(limit, 1)
    expected = value if _depth_brute_force(text) <= limit else NO_JSON
    assert extract_json(text, "whole", max_depth=limit) == expected


@settings(max_examples=60)
@given(json_values.filter(lambda v: isinstance(v, (dict, list))), st.text(alphabet="abc .,:\n"), st.text(alphabet="abc .,:\n"))
def test_first_finds_a_value_in_prose(value, before, after):
    assert extract_json(f"{before}{json.dumps(value)}{after}", "first") == value
