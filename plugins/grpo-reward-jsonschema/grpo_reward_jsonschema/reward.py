"""The ``json-schema`` reward: does the JSON in a completion validate against a JSON Schema?"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from grpo_reward_jsonschema.extract import MODES, NO_JSON, extract_json
from grpo_reward_jsonschema.validation import count_violations, schema_text, validator_for_text


class SchemaFile(str):
    """The path of a schema file, as the ``schema`` parameter holds it once validated.

    Marked so the reward tells it apart from a row's schema, which arrives under the same name.
    """

    __slots__ = ()


def json_schema_reward(
    completion,
    schema=None,
    *,
    schema_column="schema",
    extract="auto",
    partial=0.5,
    formats=False,
    max_chars=100_000,
    max_depth=64,
):
    """Score the JSON in ``completion`` against ``schema``: JSON text, an object, or a ``SchemaFile``.

    1.0 when it is valid; ``partial / violations`` when JSON parses but breaks the schema
    (so more violations score lower, and never reach 1.0); 0.0 when no JSON can be parsed.
    A bad schema raises ValueError naming it.
    """
    if isinstance(schema, SchemaFile):
        validator = validator_for_text(_read_schema_file(schema), formats, f"the schema file '{schema}'")
    elif schema is None:
        raise ValueError(
            f"no schema for this row: the column '{schema_column}' is empty; "
            "fill it with a JSON Schema, or pass schema=FILE to use one schema for every row"
        )
    else:
        validator = validator_for_text(schema_text(schema), formats, f"the schema in column '{schema_column}'")
    if not isinstance(completion, str):
        from grpo_core import completion_text

        completion = completion_text(completion)
    value = extract_json(completion, extract, max_chars, max_depth)
    if value is NO_JSON:
        return 0.0
    violations = count_violations(validator, value)
    return 1.0 if violations == 0 else partial / violations


@lru_cache(maxsize=64)
def _read_schema_file(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def schema_columns(params: dict) -> tuple[str, ...]:
    """The dataset columns the reward reads: none with a schema file, else the schema column."""
    return () if params.get("schema") else ("schema",)


def validate_params(params: dict) -> None:
    """Check the parameters at load time; a schema file is read and compiled here.

    The adapter merges parameters over columns, so when no file is given the ``schema``
    parameter is dropped (its None would hide the ``schema`` column); a file path is kept,
    absolute and marked as a ``SchemaFile``.
    """
    path = params.get("schema")
    if path is None:
        params.pop("schema", None)
    else:
        file = Path(path).expanduser()
        if not file.is_file():
            raise ValueError(f"schema file '{path}' does not exist; pass schema=PATH to an existing JSON Schema file")
        params["schema"] = SchemaFile(file.resolve())
        validator_for_text(_read_schema_file(params["schema"]), params["formats"], f"the schema file '{path}'")
    if params["extract"] not in MODES:
        raise ValueError(f"extract must be one of {', '.join(MODES)}; got {params['extract']!r}")
    if not 0 <= params["partial"] < 1:
        raise ValueError(
            f"partial must be at least 0 and below 1 (valid JSON must score above invalid), got {params['partial']}"
        )
    if params["max_chars"] < 1:
        raise ValueError(f"max_chars must be 1 or more, got {params['max_chars']}")
    if params["max_depth"] < 1:
        raise ValueError(f"max_depth must be 1 or more, got {params['max_depth']}")
    if not params.get("schema_column"):
        raise ValueError("schema_column must name a dataset column, got an empty value")
