"""What the property checks read for ``json-schema``: rows, gold answers and direction pairs (``CHECKS``).

Schemas come from the ``json-extraction`` generator and from a hypothesis strategy of small
object schemas with typed properties. A gold answer is built from the schema and confirmed
with jsonschema directly (never with the reward), so the checks can catch a wrong score.
"""

from __future__ import annotations

import json
import random

from grpo_core import Direction, RewardChecks

from grpo_reward_jsonschema.degenerate import degenerate_completions, row_problems
from grpo_reward_jsonschema.instances import _FAIL, _offline_validator, informative, valid_example
from grpo_reward_jsonschema.reward import _read_schema_file

# For each JSON type, a value that is not of that type.
_WRONG_TYPE = {"string": 12345, "integer": "twelve", "number": "twelve", "boolean": "yes",
               "array": "none", "object": "none", "null": "none"}
_NOT_JSON = ["", "   \n", "Sorry, I cannot answer that.", "The record is described above.",
             "name: Ada, age: 36", "{name: Ada}", "```json\n{\"name\": \"Ada\"\n```"]


def present(value, style: str, extract: str) -> str | None:
    """``value`` as completion text in ``style`` (plain, fenced, prose), or None where ``extract`` cannot find it."""
    container = isinstance(value, (dict, list))
    if style == "plain":
        found = extract in ("auto", "whole") or extract == "first" and container
        return json.dumps(value) if found else None
    text = json.dumps(value, indent=2)
    if style == "fenced":
        found = extract in ("auto", "fenced") or extract == "first" and container
        return f"```json\n{text}\n```" if found else None
    found = extract in ("auto", "first") and container
    return f"Here is the record you asked for:\n{text}\nLet me know if anything is missing." if found else None


# What the checks call


def _schema_of(columns, params):
    if params.get("schema"):
        return json.loads(_read_schema_file(str(params["schema"])))
    schema = columns.get("schema")
    return json.loads(schema) if isinstance(schema, str) else schema


def gold(columns, params):
    """A completion the reward must score 1.0 for this row: the expected value when the row has one, else
    a valid instance, presented for ``extract``."""
    schema = _schema_of(columns, params)
    expected = columns.get("expected") if params.get("expected_column") else None
    value = json.loads(expected) if isinstance(expected, str) and expected.strip() else valid_example(schema)
    if value is _FAIL:
        return None
    extract = params.get("extract", "auto")
    for style in ("plain", "fenced"):
        text = present(value, style, extract)
        if text is not None:
            return text
    return None


def small_schemas():
    """Hypothesis strategy: realistic small object schemas (typed properties, some required, some nested)."""
    from hypothesis import strategies as st

    flag = {"type": "boolean"}
    kinds = [
        {"type": "string"},
        {"type": "string", "minLength": 1, "maxLength": 40},
        {"type": "string", "format": "date"},
        {"type": "integer"},
        {"type": "integer", "minimum": 0, "maximum": 120},
        {"type": "number", "minimum": 0},
        flag,
        {"enum": ["low", "medium", "high"]},
        {"type": "array", "items": {"type": "string"}},
        {"type": "array", "items": {"type": "integer"}, "minItems": 1},
        {"type": ["string", "null"]},
    ]
    leaves = st.sampled_from(kinds)
    # A record is never flags alone: on three flags a constant answer is right on two by chance.
    first_leaves = st.sampled_from([kind for kind in kinds if kind is not flag])
    names = st.lists(st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True), min_size=1, max_size=6, unique=True)

    def build(draw_names, draw_leaves, required_mask, closed, nested):
        properties = dict(zip(draw_names, draw_leaves))
        required = [n for n, keep in zip(draw_names, required_mask) if keep] or [draw_names[0]]
        schema = {"type": "object", "properties": properties, "required": required}
        if closed:
            schema["additionalProperties"] = False
        if nested is not None and "address" not in properties:
            properties["address"] = nested
        return schema

    nested = st.none() | st.just({
        "type": "object",
        "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        "required": ["city"],
    })
    return names.flatmap(
        lambda ns: st.builds(
            build,
            st.just(ns),
            st.tuples(first_leaves, st.lists(leaves, min_size=len(ns) - 1, max_size=len(ns) - 1))
            .map(lambda drawn: [drawn[0], *drawn[1]]),
            st.lists(st.booleans(), min_size=len(ns), max_size=len(ns)),
            st.booleans(),
            nested,
        )
    )


def dataset_schemas():
    """Hypothesis strategy: schemas of ``json-extraction`` rows."""
    from hypothesis import strategies as st

    from grpo_reward_jsonschema.dataset import make_row

    return st.integers(0, 2**32 - 1).map(lambda seed: json.loads(make_row(random.Random(seed), None)["schema"]))


def _schemas(params):
    from hypothesis import strategies as st

    if params.get("schema"):
        return st.just(None)
    return small_schemas() | dataset_schemas()


def rows(params):
    """Hypothesis strategy of rows (column dicts): ``{"schema": JSON text}`` (none with a schema file), and
    ``"expected"``, a valid instance as JSON text, unless ``expected_column`` is empty."""
    from hypothesis import strategies as st

    def row(schema):
        found = {} if params.get("schema") else {"schema": json.dumps(schema)}
        if params.get("expected_column"):
            schema = schema if schema is not None else _schema_of({}, params)
            value = valid_example(schema)
            found["expected"] = None if value is _FAIL else json.dumps(informative(schema, value))
        return found

    return _schemas(params).map(row)


def _cases(params):
    """Strategy of (columns, valid instance, ways to break it) for rows where both can be built."""

    def with_instance(row):
        schema = _schema_of(row, params)
        expected = row.get("expected")
        value = json.loads(expected) if isinstance(expected, str) else valid_example(schema)
        return row, value, [] if value is _FAIL else _ways_to_break(schema, value)

    return rows(params).map(with_instance).filter(lambda case: bool(case[2]))


def _ways_to_break(schema, value):
    """Independent edits that each add at least one violation to the valid ``value``.

    For objects: drop a required property, or give an optional typed property a wrong value.
    Otherwise the one edit is to replace the whole value with one the schema rejects.
    """
    ways = []
    if isinstance(schema, dict) and isinstance(value, dict):
        required = schema.get("required", [])
        for name in required:
            if name in value:
                ways.append(("drop", name))
        for name, subschema in schema.get("properties", {}).items():
            if name in value and name not in required and isinstance(subschema, dict):
                wrong = _wrong_value(subschema)
                if wrong is not _FAIL:
                    ways.append(("retype", name, wrong))
    if not ways:
        wrong = _rejected_value(schema)
        if wrong is not _FAIL:
            ways.append(("replace", wrong))
    return ways


def _wrong_value(subschema):
    if "enum" in subschema:
        return "not-one-of-the-choices"
    kind = subschema.get("type")
    if isinstance(kind, str) and kind in _WRONG_TYPE:
        return _WRONG_TYPE[kind]
    return _FAIL


def _rejected_value(schema):
    validator = _offline_validator(schema)
    for candidate in ({"unexpected": [1]}, ["unexpected"], "unexpected", 0.5, None, True):
        try:
            if not validator.is_valid(candidate):
                return candidate
        except Exception:
            continue
    return _FAIL


def _break(value, ways):
    broken = dict(value) if isinstance(value, dict) else value
    for way in ways:
        if way[0] == "drop":
            broken.pop(way[1], None)
        elif way[0] == "retype":
            broken[way[1]] = way[2]
        else:
            return way[1]
    return broken


def _shown(draw, value, params):
    """``value`` in a drawn presentation that ``extract`` can find, or None when there is none."""
    from hypothesis import strategies as st

    extract = params.get("extract", "auto")
    style = draw(st.sampled_from(("plain", "fenced", "prose")))
    for style in (style, "plain", "fenced"):
        text = present(value, style, extract)
        if text is not None:
            return text
    return None


def _presentable(pair) -> bool:
    return pair[0] is not None and pair[1] is not None


def valid_over_invalid(params):
    """Pairs (valid JSON, the same JSON with one or more violations) for the same schema."""
    from hypothesis import strategies as st

    @st.composite
    def pair(draw):
        columns, value, ways = draw(_cases(params))
        chosen = draw(st.lists(st.sampled_from(range(len(ways))), min_size=1, max_size=len(ways), unique=True))
        worse = _break(value, [ways[i] for i in chosen])
        return _shown(draw, value, params), _shown(draw, worse, params), columns

    return pair().filter(_presentable)


def fewer_over_more(params):
    """Pairs (JSON with some violations, the same JSON with those and more) for the same schema."""
    from hypothesis import strategies as st

    @st.composite
    def pair(draw):
        columns, value, ways = draw(_cases(params))
        order = draw(st.permutations(range(len(ways))))
        few = draw(st.integers(0, len(ways) - 1))
        many = draw(st.integers(few + 1, len(ways)))
        better = _break(value, [ways[i] for i in order[:few]])
        worse = _break(value, [ways[i] for i in order[:many]])
        return _shown(draw, better, params), _shown(draw, worse, params), columns

    return pair().filter(_presentable)


def parseable_over_unparseable(params):
    """Pairs (JSON, valid or not, where ``extract`` finds it; text in which no JSON parses)."""
    from hypothesis import strategies as st

    @st.composite
    def pair(draw):
        columns, value, ways = draw(_cases(params))
        edits = [way for way in ways if way[0] != "replace"]
        chosen = draw(st.lists(st.sampled_from(edits), max_size=len(edits), unique=True)) if edits else []
        better = _break(value, chosen)
        unparseable = [st.sampled_from(_NOT_JSON), st.text(alphabet="abcdefghij klmnop,.!?'\n", max_size=80)]
        text = json.dumps(better)
        if isinstance(better, (dict, list)):
            # cut short, as at max_completion_length: the opening bracket never closes
            unparseable.append(st.integers(1, len(text) - 1).map(lambda cut: text[:cut]))
        if isinstance(better, dict) and better:
            unparseable.append(st.just(repr(better)))  # a Python dict: single quotes, True, None
        return _shown(draw, better, params), draw(st.one_of(unparseable)), columns

    return pair().filter(_presentable)


CHECKS = RewardChecks(
    directions=(
        Direction("JSON valid for the schema scores above JSON that breaks it", valid_over_invalid, strict=True),
        Direction("fewer schema violations score at least as high as more", fewer_over_more),
        Direction("parseable JSON scores at least as high as text with no parseable JSON", parseable_over_unparseable),
    ),
    column_strategy=rows,
    gold_example=gold,
    degenerate=degenerate_completions,
    row_problems=row_problems,
)
