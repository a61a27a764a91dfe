"""The plugin as grpo-core sees it: grpo-core's property suite, both completion shapes, columns and schema files,
parameters refused at load time, discovery."""

import subprocess
import sys

import pytest

import grpo_core
from grpo_core import RewardError, UsageError
from grpo_reward_jsonschema import SPEC

VALID = '{"name": "Ada", "age": 36, "email": "ada@example.org"}'
MISSING_EMAIL = '{"name": "Ada", "age": 36}'
PROSE = "I do not know."

VALIDITY_ONLY = {"json-schema": {"expected_column": ""}}  # rows without expected values


def test_property_suite(grpo_check):
    grpo_check(SPEC, max_examples=10, seed=3)


def conversational(text):
    return [{"role": "assistant", "content": text}]


def test_both_completion_shapes_give_the_same_scores(registry, person_schema):
    (reward,) = grpo_core.load_rewards(["json-schema"], VALIDITY_ONLY)
    assert reward.__name__ == "json-schema"
    texts = [VALID, MISSING_EMAIL, PROSE, f"```json\n{VALID}\n```"]
    schemas = [person_schema] * len(texts)
    plain = reward.score(prompts=["p"] * 4, completions=texts, schema=schemas)
    chat = reward.score(prompts=[[{"role": "user", "content": "p"}]] * 4,
                  completions=[conversational(t) for t in texts], schema=schemas)
    assert plain == chat == [1.0, 0.5, 0.0, 1.0]


def test_schema_column_can_be_renamed(registry, person_schema):
    (reward,) = grpo_core.load_rewards(["json-schema"], {"json-schema": {"schema_column": "answer_schema", "expected_column": ""}})
    assert reward.columns == {"schema": "answer_schema"}
    assert reward.score(prompts=["p"], completions=[VALID], answer_schema=[person_schema]) == [1.0]
    with pytest.raises(RewardError, match="answer_schema"):
        reward.score(prompts=["p"], completions=[VALID], schema=[person_schema])


def test_schema_file_needs_no_column(registry, tmp_path, person_schema):
    path = tmp_path / "person.schema.json"
    path.write_text(person_schema)
    (reward,) = grpo_core.load_rewards(["json-schema"], {"json-schema": {"schema": str(path), "expected_column": ""}})
    assert reward.columns == {}
    scores = reward.score(prompts=["p"] * 3, completions=[VALID, conversational(MISSING_EMAIL), PROSE])
    assert scores == [1.0, 0.5, 0.0]


def test_bad_schema_file_fails_at_load_time(registry, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "objekt"}')
    with pytest.raises(UsageError) as error:
        grpo_core.load_rewards(["json-schema"], {"json-schema": {"schema": str(bad)}})
    assert "json-schema" in str(error.value) and "bad.json" in str(error.value)
    assert "not a valid JSON Schema" in str(error.value)
    with pytest.raises(UsageError, match="does not exist"):
        grpo_core.load_rewards(["json-schema"], {"json-schema": {"schema": str(tmp_path / "missing.json")}})
    not_json = tmp_path / "notjson.json"
    not_json.write_text("type: object")
    with pytest.raises(UsageError, match="not valid JSON"):
        grpo_core.load_rewards(["json-schema"], {"json-schema": {"schema": str(not_json)}})


@pytest.mark.parametrize(
    "args, words",
    [
        ({"extract": "regex"}, "extract"),
        ({"partial": 1.0}, "partial"),
        ({"partial": -0.1}, "partial"),
        ({"max_depth": 0}, "max_depth"),
        ({"max_chars": 0}, "max_chars"),
    ],
)
def test_bad_parameters_fail_at_load_time(registry, args, words):
    with pytest.raises(UsageError, match=words):
        grpo_core.load_rewards(["json-schema"], {"json-schema": args})


def test_bad_column_schema_on_a_whole_batch_names_plugin_and_schema(registry):
    (reward,) = grpo_core.load_rewards(["json-schema"], VALIDITY_ONLY)
    with pytest.raises(RewardError) as error:
        reward.score(prompts=["p"] * 2, completions=[VALID, VALID], schema=['{"type": "objekt"}'] * 2)
    message = str(error.value)
    assert "json-schema" in message and "objekt" in message and "not a valid JSON Schema" in message


def test_one_bad_row_gives_none_for_its_completions_only(registry, person_schema):
    (reward,) = grpo_core.load_rewards(["json-schema"], VALIDITY_ONLY)
    scores = reward.score(prompts=["p"] * 2, completions=[VALID, VALID], schema=[person_schema, "{oops"])
    assert scores == [1.0, None]


def test_importing_the_plugin_is_cheap():
    code = (
        "import sys, grpo_reward_jsonschema; "
        "heavy = [m for m in ('jsonschema', 'referencing', 'hypothesis', 'datasets', 'torch', 'transformers', "
        "'sympy', 'math_verify') if m in sys.modules]; print(','.join(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def test_registered_through_the_entry_point_hooks(registry):
    spec = registry.reward("json-schema")
    assert spec.bounds == (0.0, 1.0)
    assert spec.distribution == "grpo-reward-jsonschema"
    assert registry.dataset("json-extraction").distribution == "grpo-reward-jsonschema"


def test_entry_point_is_declared():
    from importlib import metadata

    points = [ep for ep in metadata.entry_points(group="grpo") if ep.value == "grpo_reward_jsonschema"]
    assert [ep.name for ep in points] == ["json-schema"]


def test_resolved_file_parameters_resolve_again_and_pickle(tmp_path, person_schema):
    import pickle

    from grpo_reward_jsonschema import SchemaFile

    path = tmp_path / "person.json"
    path.write_text(person_schema)
    params = SPEC.resolve({"schema": str(path)})
    assert isinstance(params["schema"], SchemaFile)
    again = SPEC.resolve({**params, "extract": "whole"})  # how the checks vary one parameter at a time
    assert again["schema"] == params["schema"] and again["extract"] == "whole"
    copy = pickle.loads(pickle.dumps(params))  # parameters travel to worker processes
    assert isinstance(copy["schema"], SchemaFile)
    assert SPEC.func(VALID, **copy) == 1.0


def test_resolved_column_parameters_leave_the_column_alone():
    params = SPEC.resolve({})
    assert "schema" not in params  # a None parameter would hide the row's schema in the adapter's call
    assert SPEC.required_columns(params) == {"schema": "schema"}
    assert SPEC.optional_column_sources(params) == {"expected": "expected"}
    assert SPEC.required_columns(SPEC.resolve({"expected_column": ""})) == {"schema": "schema"}
    assert SPEC.resolve({**params, "partial": 0.25})["partial"] == 0.25
