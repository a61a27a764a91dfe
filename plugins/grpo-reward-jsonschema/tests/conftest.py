import json

import pytest

from grpo_core.testing import fresh_registry_fixture, offline_hub

offline_hub()
fresh_registry = fresh_registry_fixture()

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "email": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age", "email"],
    "additionalProperties": False,
}


@pytest.fixture
def person_schema():
    return json.dumps(PERSON)


@pytest.fixture
def registry(monkeypatch):
    """A registry holding only grpo-core's built-ins and this plugin, whatever else is installed."""
    import grpo_reward_jsonschema
    from grpo_core.testing import registered

    monkeypatch.setenv("GRPO_LOAD_PLUGINS", "")
    with registered(grpo_reward_jsonschema, distribution="grpo-reward-jsonschema") as reg:
        yield reg
