"""Building instances of a schema: a valid one from its keywords, and an informative record that filler
cannot match by chance. Used by the property checks and the degenerate completions; no heavy imports at module level."""

from __future__ import annotations

import itertools
import math

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
# For each format, another valid value: what a record holds where filler writes the example above.
_OTHER_FORMAT_VALUES = {
    "date": "1987-03-09",
    "date-time": "1987-03-09T18:05:00Z",
    "time": "18:05:00Z",
    "email": "ada.lovelace@example.org",
    "uri": "https://example.org/records/42",
    "uuid": "9f1c2b7e-4d3a-4e8f-b6a1-0c5d7e2f3a4b",
    "ipv4": "198.51.100.7",
    "ipv6": "2001:db8::7",
    "hostname": "records.example.org",
}

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

    from grpo_reward_jsonschema.patterns import validator_class
    from grpo_reward_jsonschema.validation import _offline_registry

    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    return validator_class(cls)(schema, registry=_offline_registry())


def informative(schema, value):
    """``value`` with filler-like leaves ("", "example", 0, 1, an enum's first option, a format's example,
    booleans) changed wherever the schema still accepts it: a record a real extraction would give, which
    filler cannot match by chance. Booleans alternate, false first, so neither constant matches most of them."""
    flips = itertools.count()

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
        if isinstance(leaf, bool):
            return next(flips) % 2 == 1
        if isinstance(leaf, str) and sub.get("format") in _OTHER_FORMAT_VALUES and "pattern" not in sub:
            return _OTHER_FORMAT_VALUES[sub["format"]]
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
