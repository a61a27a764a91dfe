from hypothesis import HealthCheck, settings

from grpo_core.testing import offline_hub

offline_hub()

# Noise strategies reject the rare draw that spells a tag by accident.
settings.register_profile("xml", max_examples=80, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
settings.load_profile("xml")
