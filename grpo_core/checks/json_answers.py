"""Rewards whose right answer is a JSON object or array: constants (``{}``, ``[]``, ``0``, ``"x"``, ``null``) and the
right object's keys with wrong values must score below the right object (``json-constants``). Built on the right
answers of ``right_answers``."""

from __future__ import annotations

import json

from grpo_core.checks.display import clip_repr
from grpo_core.checks.results import FAIL, PASS, PropertyResult
from grpo_core.checks.right_answers import Row, example_of, margin, paid_rows, replaced, score, scored_rows
from grpo_core.checks.subject import RewardUnderTest


def json_constants(prop, subject: RewardUnderTest, inputs, deadline: float) -> PropertyResult | None:
    """For a row whose answer is a JSON object or array: constants (``{}``, ``[]``, ``0``, ``"x"``, ``null``) and the
    right object's keys with wrong values score below the right object, in the form that was paid."""
    rows, skipped = paid_rows(subject, inputs, "json-constants")
    if skipped:
        return None if not _json_rows(scored_rows(subject, inputs).rows) else skipped
    rows = [(row, paid) for row, paid in rows if _json_value(row.gold) is not None]
    if not rows:
        return None  # no answer is a JSON object: not a JSON reward, no line
    tol, tried = margin(subject), 0
    for row, paid in rows:
        label, form, top = paid[0]
        constants = [(f"the constant {c}", c) for c in ("{}", "[]", "0", '"x"', "null", "true")]
        constants.append(("the right keys with wrong values", json.dumps(_wrong_values(_json_value(row.gold)))))
        texts = [replaced(form, row.gold, c) for _, c in constants]
        scores = score(subject, row, texts) or []
        tried += len(scores)
        half = subject.lo + (top - subject.lo) / 2
        for (what, _), text, s in zip(constants, texts, scores):
            if s is not None and s >= min(top - tol, half):
                return subject.result(
                    "json-constants", FAIL, f"json-constants violated: a constant or a wrong object scores below the "
                    f"right one; {what}, {clip_repr(text)}, scored {s!r} where the right object scored {top!r}",
                    example_of(subject, row, [form, text], [top, s]), tried)
    return subject.result("json-constants", PASS, f"{tried} constants and wrong objects scored below the right one",
                          examples=tried)


def _json_value(text: str):
    try:
        value = json.loads(text)
    except (ValueError, TypeError):
        return None
    return value if isinstance(value, (dict, list)) and value else None


def _json_rows(rows: list[Row]) -> list[Row]:
    return [row for row in rows if _json_value(row.gold) is not None]


def _wrong_values(value):
    """The same shape with every leaf changed: text to other text, a number plus one, a bool flipped."""
    if isinstance(value, dict):
        return {k: _wrong_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wrong_values(v) for v in value]
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if value is None:
        return "x"
    return f"{value}x"
