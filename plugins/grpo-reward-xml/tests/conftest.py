from hypothesis import HealthCheck, settings

from grpo_core.testing import fresh_registry_fixture, offline_hub

offline_hub()
fresh_registry = fresh_registry_fixture()

# Noise strategies reject the rare draw that spells a tag by accident.
settings.register_profile("xml", max_examples=80, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
settings.load_profile("xml")
