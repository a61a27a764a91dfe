"""Reward ``json-schema``: the JSON in a completion, validated against a JSON Schema; dataset ``json-extraction``.

Importing this module is cheap: jsonschema, hypothesis and datasets are imported where they are used.
"""

from __future__ import annotations

from grpo_core import DatasetSpec, Param, RewardSpec, dataset_param, hookimpl

from grpo_reward_jsonschema.dataset import DEFAULT_SYSTEM_PROMPT, load_json_extraction
from grpo_reward_jsonschema.extract import MODES
from grpo_reward_jsonschema.properties import CHECKS
from grpo_reward_jsonschema.reward import (SchemaFile, json_schema_reward, optional_columns, schema_columns,
                                           validate_params)

__all__ = ["DATASET", "SPEC", "SchemaFile", "json_schema_reward", "load_json_extraction"]

SPEC = RewardSpec(
    name="json-schema",
    description="JSON valid for a JSON Schema and, with expected values, matching them field by field; "
                "0 if unparseable",
    func=json_schema_reward,
    bounds=(0.0, 1.0),
    columns=schema_columns,
    optional_columns=optional_columns,  # without an expected column: validity only, and the checks say so
    params=(
        Param("schema_column", "schema", str, "dataset column with each row's JSON Schema (JSON text or an object)"),
        Param("schema", None, str, "a JSON Schema file used for every row instead of the column"),
        Param("expected_column", "expected", str, "dataset column with each row's expected value as JSON; the "
              "score is validity times the share of expected fields matched (empty: score validity only)"),
        Param("extract", "auto", str, "where the JSON is: whole text, a ```json fence, the first {...} or [...], "
              "or auto (those in order)", MODES),
        Param("partial", 0.5, float, "score of parseable JSON with one violation; n violations score partial/n "
              "(0: all or nothing)"),
        Param("formats", False, bool, "also enforce 'format' keywords (date, email, ...)"),
        Param("max_chars", 100_000, int, "longest JSON text parsed, in characters; longer counts as unparseable"),
        Param("max_depth", 64, int, "deepest nesting parsed; deeper counts as unparseable"),
    ),
    timeout=5.0,  # schema patterns and uniqueItems run on model text
    checks=CHECKS,
    validate=validate_params,
)

DATASET = DatasetSpec(
    name="json-extraction",
    description="Records described in prose, to answer as JSON following the given schema (procedural, offline)",
    load="grpo_reward_jsonschema.dataset:load_json_extraction",
    columns=("schema", "expected"),
    params=(
        dataset_param("size", 1000),
        dataset_param("seed"),
        dataset_param("system_prompt", DEFAULT_SYSTEM_PROMPT),
    ),
)


@hookimpl
def register_rewards(register):
    register(SPEC)


@hookimpl
def register_datasets(register):
    register(DATASET)
