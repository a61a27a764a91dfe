"""Comparing the values a completion gives with the expected ones, field by field.

The match of a value with an expected value is a number from 0.0 to 1.0:

- object: the mean match over the expected object's keys (a key missing from the value
  matches 0.0; keys the value adds are left to the schema's ``additionalProperties``);
  an empty expected object matches any object;
- array: each expected item paired with its best unused given item, in any order (in order
  only, above 200 items); the sum is divided by the longer length, so extra or missing items
  cost;
- string: equal after Unicode NFKC normalisation, case folding, and whitespace runs as one
  space with none at the ends (``" Ada  LOVELACE"`` matches ``"ada lovelace"``);
- number: the same value as ``grpo_core.same_number`` judges it (``36``, ``36.0`` and ``3.6e1``
  are one value); a boolean is not a number;
- boolean and null: the same value.
"""

from __future__ import annotations

import unicodedata

MAX_PAIRED_ITEMS = 200  # above this, array items are only compared in order (bounded cost)


def normalize_string(text: str) -> str:
    """The form strings are compared in: NFKC, case-folded, whitespace runs as one space, stripped."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _number(value):
    from grpo_core import parse_number

    return parse_number(repr(value) if isinstance(value, float) else str(value), units=False)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def match(expected, value) -> float:
    """How well ``value`` matches ``expected``, from 0.0 to 1.0 (rules in the module docstring)."""
    if isinstance(expected, dict):
        if not isinstance(value, dict):
            return 0.0
        if not expected:
            return 1.0
        return sum(match(item, value[key]) if key in value else 0.0 for key, item in expected.items()) / len(expected)
    if isinstance(expected, list):
        if not isinstance(value, list):
            return 0.0
        if not expected and not value:
            return 1.0
        longer = max(len(expected), len(value))
        if longer > MAX_PAIRED_ITEMS:
            return sum(match(e, v) for e, v in zip(expected, value)) / longer
        unused, total = list(value), 0.0
        for item in expected:
            scores = [match(item, candidate) for candidate in unused]
            if scores:
                best = max(range(len(scores)), key=scores.__getitem__)
                total += scores[best]
                unused.pop(best)
        return total / longer
    if isinstance(expected, str):
        return 1.0 if isinstance(value, str) and normalize_string(value) == normalize_string(expected) else 0.0
    if _is_number(expected):
        if not _is_number(value):
            return 0.0
        from grpo_core import same_number

        gold, given = _number(expected), _number(value)
        return 1.0 if gold is not None and given is not None and same_number(gold, given) else 0.0
    return 1.0 if type(value) is type(expected) and value == expected else 0.0
