from grpo_core.testing import fresh_registry_fixture, offline_hub

offline_hub()
fresh_registry = fresh_registry_fixture()


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: end-to-end runs that train a model")
