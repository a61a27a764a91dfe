from grpo_core.testing import fresh_registry_fixture, offline_hub

offline_hub()
fresh_registry = fresh_registry_fixture()
