"""What the property checks draw for ``json-schema``: rows, gold answers and direction pairs.

Schemas come from the ``json-extraction`` generator and from a hypothesis strategy of small
object schemas with typed properties. A gold answer is built from the schema and confirmed
with jsonschema directly (never with the reward), so the checks can catch a wrong score.
"""

from __future__ import annotations

import json
import math
import random

from grpo_reward_jsonschema.reward import _read_schema_file

_FAIL = object()  # no instance could be built for a subschema
_FORMAT_EXAMPLES = {
    "date": "2024-05-17",
    "date-time": "2024-05-17T09:30:00Z",
    "time": "09:30:00Z",
    "email": "someone@example.com",
    "uri": "https://example.com/item",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
}
# For each JSON type, a value that is not of that type.
_WRONG_TYPE = {"string": 12345, "integer": "twelve", "number": "twelve", "boolean": "yes",
               "array": "none", "object": "none", "null": "none"}
_NOT_JSON = ["", "   \n", "Sorry, I cannot answer that.", "The record is described above.",
             "name: Ada, age: 36", "{name: Ada}", "```json\n{\"name\": \"Ada\"\n```"]


# Building a valid instance


def example_instance(schema, root=None, depth=0):
    """A value valid for ``schema`` built from its keywords, or ``_FAIL`` (unchecked; see ``valid_example``)."""
    root = schema if root is None else root
    if depth > 12:
        return _FAIL
    if schema is True or schema == {}:
        return "example"
    if not isinstance(schema, dict):
        return _FAIL
    if "$ref" in schema:
        target = _local_ref(root, schema["$ref"])
        return _FAIL if target is None else example_instance(target, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0] if schema["enum"] else _FAIL
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema:
            for option in schema[keyword]:
                value = example_instance(option, root, depth + 1)
                if value is not _FAIL:
                    return value
            return _FAIL
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((t for t in kind if t != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema or "required" in schema else "array" if "items" in schema else None
    if kind == "object":
        return _example_object(schema, root, depth)
    if kind == "array":
        return _example_array(schema, root, depth)
    if kind == "string":
        return _example_string(schema)
    if kind in ("integer", "number"):
        return _example_number(schema, kind)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "example"


def _local_ref(root, ref):
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    node = root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _example_object(schema, root, depth):
    result = {}
    properties = schema.get("properties", {})
    for name, subschema in properties.items():
        value = example_instance(subschema, root, depth + 1)
        if value is _FAIL:
            if name in schema.get("required", []):
                return _FAIL
            continue
        result[name] = value
    for name in schema.get("required", []):
        if name not in result:
            result[name] = "example"
    return result


def _example_array(schema, root, depth):
    items = schema.get("items", {})
    count = max(schema.get("minItems", 1), 1)
    if schema.get("maxItems") is not None:
        count = min(count, schema["maxItems"])
    if isinstance(items, list):  # draft 4-7 tuple form
        return _FAIL
    prefix = [example_instance(s, root, depth + 1) for s in schema.get("prefixItems", [])]
    if _FAIL in prefix:
        return _FAIL
    if items is False:
        return prefix
    value = example_instance(items, root, depth + 1)
    if value is _FAIL:
        return prefix if len(prefix) >= schema.get("minItems", 0) else _FAIL
    return prefix + [value] * max(count - len(prefix), 0)


def _example_string(schema):
    if schema.get("format") in _FORMAT_EXAMPLES:
        return _FORMAT_EXAMPLES[schema["format"]]
    text = "example"
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    text = text + "x" * max(low - len(text), 0)
    return text if high is None else text[:high]


def _example_number(schema, kind):
    low = schema.get("minimum")
    if schema.get("exclusiveMinimum") is not None and not isinstance(schema["exclusiveMinimum"], bool):
        low = max(low if low is not None else -math.inf, schema["exclusiveMinimum"] + 1)
    high = schema.get("maximum")
    if schema.get("exclusiveMaximum") is not None and not isinstance(schema["exclusiveMaximum"], bool):
        high = min(high if high is not None else math.inf, schema["exclusiveMaximum"] - 1)
    value = 1 if low is None else math.ceil(low)
    if high is not None and value > high:
        value = math.floor(high)
    step = schema.get("multipleOf")
    if isinstance(step, int) and step > 0:
        value = math.ceil(value / step) * step
    return int(value)


def valid_example(schema):
    """A value that jsonschema confirms is valid for ``schema``, or ``_FAIL``."""
    value = example_instance(schema)
    if value is _FAIL:
        return _FAIL
    try:
        return value if _offline_validator(schema).is_valid(value) else _FAIL
    except Exception:  # an unresolvable reference: no gold for this schema
        return _FAIL


def _offline_validator(schema):
    """A plain jsonschema validator for ``schema`` (no caching, no scoring) that never fetches references."""
    from jsonschema import validators

    from grpo_reward_jsonschema.validation import _offline_registry

    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    return cls(schema, registry=_offline_registry())


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

    leaves = st.sampled_from([
        {"type": "string"},
        {"type": "string", "minLength": 1, "maxLength": 40},
        {"type": "string", "format": "date"},
        {"type": "integer"},
        {"type": "integer", "minimum": 0, "maximum": 120},
        {"type": "number", "minimum": 0},
        {"type": "boolean"},
        {"enum": ["low", "medium", "high"]},
        {"type": "array", "items": {"type": "string"}},
        {"type": "array", "items": {"type": "integer"}, "minItems": 1},
        {"type": ["string", "null"]},
    ])
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
            st.lists(leaves, min_size=len(ns), max_size=len(ns)),
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
            found["expected"] = None if value is _FAIL else json.dumps(_informative(schema, value))
        return found

    return _schemas(params).map(row)


def _informative(schema, value):
    """``value`` with filler-like leaves ("", "example", 0, 1, an enum's first option) changed wherever the
    schema still accepts it: a record a real extraction would give, which filler cannot match by chance."""

    def change(sub, leaf, name):
        sub = sub if isinstance(sub, dict) else {}
        if isinstance(leaf, dict):
            properties = sub.get("properties") if isinstance(sub.get("properties"), dict) else {}
            return {key: change(properties.get(key), item, key) for key, item in leaf.items()}
        if isinstance(leaf, list):
            items = sub.get("items") if isinstance(sub.get("items"), dict) else {}
            return [change(items, item, name) for item in leaf]
        enum = sub.get("enum")
        if isinstance(enum, list) and len(enum) > 1 and leaf == enum[0]:
            return enum[-1]
        if isinstance(leaf, str) and "format" not in sub and "pattern" not in sub:  # formats are not validated here
            return f"{name} value"
        if isinstance(leaf, (int, float)) and not isinstance(leaf, bool) and leaf in (0, 1):
            return 7 if isinstance(leaf, int) else 7.5
        return leaf

    try:
        validator = _offline_validator(schema)
        if not isinstance(value, dict):
            changed = change(schema, value, "field")
            return changed if validator.is_valid(changed) else value
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        result = dict(value)
        for key, item in value.items():  # one property at a time, keeping each change the schema accepts
            trial = {**result, key: change(properties.get(key), item, key)}
            if validator.is_valid(trial):
                result = trial
        return result
    except Exception:
        return value


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
