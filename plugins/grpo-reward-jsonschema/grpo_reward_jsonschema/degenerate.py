"""The completions ``json-schema`` must not pay for, and what makes a row unfit for it (loose schemas, unreadable
expected values). No heavy imports at module level."""

from __future__ import annotations

import json

from grpo_reward_jsonschema.reward import SchemaFile, _read_schema_file


def _row_schema(columns: dict, params: dict):
    """The row's schema as an object (None when it cannot be read: the reward reports that itself)."""
    schema = params.get("schema")
    if isinstance(schema, SchemaFile):
        text = _read_schema_file(schema)
    else:
        schema = columns.get("schema")
        if isinstance(schema, (dict, bool)):
            return schema
        text = schema
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _shown(schema) -> str:
    text = json.dumps(schema, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def row_problems(columns: dict, params: dict) -> list[tuple[str, str]]:
    """Loose schemas (no top-level type, no required keys) and expected values that are not JSON."""
    problems = []
    schema = _row_schema(columns, params)
    if schema is True or schema == {}:
        problems.append(("schema accepts any JSON, so any parseable JSON scores 1.0", _shown(schema)))
    elif isinstance(schema, dict):
        if "type" not in schema and not any(k in schema for k in ("$ref", "anyOf", "oneOf", "allOf", "const", "enum")):
            problems.append(("schema has no top-level type, so numbers, strings and arrays can be valid",
                             _shown(schema)))
        if not schema.get("required"):
            problems.append(("schema requires no properties, so {} is valid and scores 1.0 without expected values",
                             _shown(schema)))
    expected = columns.get("expected") if params.get("expected_column") else None
    if isinstance(expected, str) and expected.strip():
        try:
            json.loads(expected)
        except ValueError:
            problems.append(("expected value is not JSON", expected[:80]))
    elif params.get("expected_column") and (expected is None or isinstance(expected, str)):
        column = params["expected_column"]
        problems.append((f"no expected value in column '{column}', so only validity is scored and content is not "
                         f"compared (to compare it, give each row its expected record as JSON in '{column}'; to "
                         "score validity only and silence this, set expected_column= empty)",
                         _shown(schema) if schema is not None else ""))
    return problems


_BLANKS = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": [], "null": None}


def blank_instance(schema):
    """Every property of an object schema at its type's blank value (``""``, ``0``, ``false``, ``[]``, ``{}``)."""
    if not isinstance(schema, dict):
        return None
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        return {name: blank_instance(sub) for name, sub in properties.items()}
    return _BLANKS.get(kind if isinstance(kind, str) else "", "")


def degenerate_completions(prompt: str, columns: dict, params: dict) -> list[tuple[str, str]]:
    """(label, completion) pairs that do not extract the record: empty, trivial JSON, copies, filler."""
    from grpo_reward_jsonschema.instances import _FAIL, example_instance

    schema = _row_schema(columns, params)
    found = [
        ("empty", ""),
        ("whitespace only", " \n\t " * 20),
        ("the prompt copied back", prompt),
        ("an empty object", "{}"),
        ("an empty object padded with whitespace", "{" + " " * 200 + "}"),
        ("an empty array", "[]"),
        ("null", "null"),
        ("zero", "0"),
        ("a string", '"N/A"'),
        ("an infinite number", "1e400"),
        ("Infinity", '{"value": Infinity}'),
    ]
    has_expected = params.get("expected_column") and columns.get("expected") not in (None, "")
    if isinstance(schema, dict):
        found.append(("the schema copied back", json.dumps(schema)))
        names = list(schema.get("properties", {})) if isinstance(schema.get("properties"), dict) else []
        if names:
            found.append(("every property set to null", json.dumps(dict.fromkeys(names))))
        if names and has_expected:  # without expected values a placeholder that fits the schema is valid JSON
            found.append(("every property set to a placeholder string", json.dumps(dict.fromkeys(names, "..."))))
    if has_expected and isinstance(schema, dict):
        try:
            expected = json.loads(columns["expected"]) if isinstance(columns["expected"], str) else columns["expected"]
        except ValueError:
            expected = _FAIL
        # Without expected values filler is a correct answer; with them it extracts nothing, unless the
        # expected record happens to hold the filler's values in most fields (then filler is mostly right).
        for label, build in (("schema-fitting filler", example_instance), ("blank filler", blank_instance)):
            value = build(schema)
            if value is not _FAIL and value is not None and (expected is _FAIL or agreement(expected, value) <= 0.5):
                text = json.dumps(value)
                found.append((label, text))
                found.append((label + " repeated", "\n".join([text] * 5)))
                found.append((label + " in a fence", "```json\n" + text + "\n```"))
    return found


def agreement(expected, value) -> float:
    """How much of the expected record ``value`` holds by chance, from 0 to 1: the mean over an object's fields
    and an array's positions, down to leaves with the very same JSON. Independent of the reward's own matching,
    so a reward whose matching pays anything is still shown filler."""
    if isinstance(expected, dict) and expected:
        if not isinstance(value, dict):
            return 0.0
        return sum(agreement(item, value[name]) for name, item in expected.items() if name in value) / len(expected)
    if isinstance(expected, list) and expected:
        if not isinstance(value, list):
            return 0.0
        return sum(agreement(a, b) for a, b in zip(expected, value)) / max(len(expected), len(value))
    return float(json.dumps(expected, sort_keys=True) == json.dumps(value, sort_keys=True))
