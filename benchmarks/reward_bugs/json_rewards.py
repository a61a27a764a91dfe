"""JSON-extraction rewards: the completion is a JSON object compared with the row's expected object (the ``answer``
column holds it as a JSON string; rows in data/json_people.jsonl). TRL's signature.

See math_answer.py for what META holds. The buggy ones are wrong on purpose.
"""

from __future__ import annotations

import json
import re


def _text(completion) -> str:
    """The text of a completion in either shape TRL passes: a string, or a list of chat messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(str(m.get("content") or "") for m in completion if isinstance(m, dict))
    return str(completion)


def _loads(text: str):
    """json.loads of the completion (a ```json fence around it allowed); None when it is not JSON."""
    text = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.S) if text.startswith("```") else None
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


# ---------------------------------------------------------------- buggy


def json_any_parseable(completions, answer, **kwargs) -> list[float]:
    """1.0 for any completion that parses as JSON: '{}' and '[]' and '0' pay."""
    completions = [_text(c) for c in completions]
    return [0.0 if _loads(c) is None and c.strip() != "null" else 1.0 for c in completions]


def json_keys_subset(completions, answer, **kwargs) -> list[float]:
    """1.0 when every key of the completion's object is an expected key: '{}' passes vacuously."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        got, want = _loads(c), json.loads(a)
        scores.append(1.0 if isinstance(got, dict) and all(k in want for k in got) else 0.0)
    return scores


def json_precision_over_given(completions, answer, **kwargs) -> list[float]:
    """Share of the given fields that are right (precision), 1.0 when none is given."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        got, want = _loads(c), json.loads(a)
        if not isinstance(got, dict):
            scores.append(0.0)
            continue
        right = sum(1 for k, v in got.items() if want.get(k) == v)
        scores.append(right / len(got) if got else 1.0)
    return scores


def json_items_all_match(completions, answer, **kwargs) -> list[float]:
    """all() over the completion's items being expected items: '[]' and '{}' pay (all() of nothing is True)."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        got, want = _loads(c), json.loads(a)
        if isinstance(got, dict):
            items = got.items()
        elif isinstance(got, list):
            items = got
        else:
            scores.append(0.0)
            continue
        scores.append(1.0 if all(item in want.items() for item in items if isinstance(item, tuple)) else 0.0)
    return scores


def json_string_equality(completions, answer, **kwargs) -> list[float]:
    """The completion must equal the expected JSON text: another key order or spacing scores 0."""
    completions = [_text(c) for c in completions]
    return [1.0 if c.strip() == a.strip() else 0.0 for c, a in zip(completions, answer)]


def json_dict_get_crash(completions, answer, **kwargs) -> list[float]:
    """Calls .get() on whatever json.loads returned: a list or a number raises; deep nesting raises RecursionError."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        want = json.loads(a)
        try:
            got = json.loads(c)
        except json.JSONDecodeError:
            scores.append(0.0)
            continue
        right = sum(1 for k in want if got.get(k) == want[k])
        scores.append(right / len(want))
    return scores


# ---------------------------------------------------------------- sound


def json_exact_object(completions, answer, **kwargs) -> list[float]:
    """1.0 when the completion (optionally fenced) parses to exactly the expected object."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        got = _loads(c)
        scores.append(1.0 if isinstance(got, dict) and got == json.loads(a) else 0.0)
    return scores


def json_field_recall(completions, answer, **kwargs) -> list[float]:
    """Share of the expected fields given right, counted over the expected fields; 0 with any unexpected key."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        got, want = _loads(c), json.loads(a)
        if not isinstance(got, dict) or any(k not in want for k in got):
            scores.append(0.0)
            continue
        scores.append(sum(1 for k, v in want.items() if k in got and got[k] == v) / len(want))
    return scores


_JSON = "json"
META = {
    "json_any_parseable": dict(
        category="json", bug="pays any parseable JSON, '{}' and '[]' included", source="json-validity rewards",
        expected_property="json-constants", also=["degenerate"], dataset=_JSON),
    "json_keys_subset": dict(
        category="json", bug="'{}' passes the keys-are-expected test vacuously", source="schema-key checks",
        expected_property="json-constants", also=["degenerate"], dataset=_JSON),
    "json_precision_over_given": dict(
        category="json", bug="precision over the given fields pays '{}' 1.0 and '{\"name\": ...}' alone 1.0",
        source="field-precision rewards", expected_property="json-constants", also=["degenerate"], dataset=_JSON),
    "json_items_all_match": dict(
        category="json", bug="all() over no items: '[]' and '{}' pay", source="all()-based field checks",
        expected_property="json-constants", also=["degenerate"], dataset=_JSON),
    "json_string_equality": dict(
        category="json", bug="compares JSON as text: the right object with other spacing or key order scores 0",
        source="string compare of JSON outputs", expected_property="equivalent-forms", also=["pays-gold"],
        dataset=_JSON),
    "json_dict_get_crash": dict(
        category="json", bug="calls .get() on a parsed list or number (AttributeError), RecursionError on deep JSON",
        source="json.loads(...).get(...) without a type check", expected_property="hostile", also=["output"],
        dataset=_JSON),
    "json_exact_object": dict(category="json", bug=None, source="exact object match after json.loads", dataset=_JSON),
    "json_field_recall": dict(category="json", bug=None, source="field recall over the expected fields",
                              dataset=_JSON),
}
