import json

import jsonschema
import pytest

from grpo_reward_jsonschema import json_schema_reward
from grpo_reward_jsonschema.dataset import DEFAULT_SYSTEM_PROMPT, generate_rows, load_json_extraction


def test_same_seed_same_rows_other_seed_other_rows():
    first = load_json_extraction(size=30, seed=7)
    again = load_json_extraction(size=30, seed=7)
    other = load_json_extraction(size=30, seed=8)
    assert first.to_list() == again.to_list()
    assert first["schema"] != other["schema"] or first["expected"] != other["expected"]
    assert generate_rows(5, seed=7) == first.to_list()[:5]


def test_columns_and_conversational_prompt():
    dataset = load_json_extraction(size=12, seed=1)
    assert len(dataset) == 12
    assert set(dataset.column_names) == {"prompt", "schema", "expected"}
    for row in dataset:
        system, user = row["prompt"]
        assert system == {"role": "system", "content": DEFAULT_SYSTEM_PROMPT}
        assert user["role"] == "user"
        assert json.loads(row["schema"])["type"] == "object"
        assert row["schema"] in user["content"]  # the model sees the very schema it is scored against
        assert isinstance(row["expected"], str)


def test_system_prompt_can_be_changed_or_dropped():
    assert load_json_extraction(size=2, seed=0, system_prompt="Be terse.")[0]["prompt"][0]["content"] == "Be terse."
    prompt = load_json_extraction(size=2, seed=0, system_prompt="")[0]["prompt"]
    assert [m["role"] for m in prompt] == ["user"]


def test_schemas_are_valid_and_expected_answers_validate():
    rows = generate_rows(60, seed=3)
    titles = set()
    for row in rows:
        schema = json.loads(row["schema"])
        expected = json.loads(row["expected"])
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        assert list(validator.iter_errors(expected)) == []
        assert json_schema_reward(row["expected"], row["schema"], formats=True) == 1.0
        assert set(expected) == set(schema["properties"])
        titles.add(schema["title"])
    assert len(titles) >= 5  # several kinds of record


def test_the_prose_states_every_expected_value():
    for row in generate_rows(100, seed=4):
        text = row["prompt"][-1]["content"].split("Text:\n", 1)[1]
        for value in json.loads(row["expected"]).values():
            for leaf in _leaves(value):
                if not isinstance(leaf, bool):
                    assert str(leaf) in text


def _leaves(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def test_size_must_be_positive():
    with pytest.raises(ValueError, match="size"):
        load_json_extraction(size=0)


def test_loaded_through_the_registry(registry):
    spec = registry.dataset("json-extraction")
    dataset = spec.load(**spec.resolve({"size": 4, "seed": 2}))
    assert dataset.to_list() == load_json_extraction(size=4, seed=2).to_list()
