"""Settings for every test in the repository: no hub access, quiet tokenizers; and, for ``make test``'s workers,
the test files longest first (by ``tests/durations.json``) and one model cache for all of them."""

import json
import os
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DURATIONS = Path(__file__).parent / "tests" / "durations.json"

# Hypothesis, for every test of the repository: the one place its profiles are named. `suite` is what make test runs:
# 80 examples a property unless a test says why it needs another count (@settings(max_examples=N) at the test), no
# per-example deadline (a loaded 2-core runner is not a slow property), and draws rejected by a filter (noise that
# spells a tag by accident) not a failed health check. `thorough` draws ten times as many wherever a test takes the
# profile's count: HYPOTHESIS_PROFILE=thorough make test.
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("suite", max_examples=80, deadline=None,
                          suppress_health_check=[HealthCheck.filter_too_much])
settings.register_profile("thorough", parent=settings.get_profile("suite"), max_examples=800)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))


def pytest_configure(config):
    """With workers (pytest -n), this process starts them: they share one model cache (a model built by one is read
    by the other; the cache writes each model to a temporary folder and renames it, so two never clash)."""
    if getattr(config.option, "numprocesses", None) and "PYTEST_XDIST_WORKER" not in os.environ:
        os.environ.setdefault("GRPO_TEST_CACHE_DIR", tempfile.mkdtemp(prefix="grpo-test-cache-"))


def pytest_collection_modifyitems(config, items):
    """In a worker, the files that took longest in the last measured run come first (each worker collects the same
    order, and make test hands files out in it: the longest are not left for the end). Files not measured yet go
    after them, in their own order; the tests of a file keep theirs."""
    if "PYTEST_XDIST_WORKER" not in os.environ or not DURATIONS.exists():
        return
    seconds = json.loads(DURATIONS.read_text())
    root = Path(str(config.rootpath))

    def recorded(item) -> float:
        try:
            return seconds.get(Path(str(item.path)).relative_to(root).as_posix(), 0.0)
        except ValueError:
            return 0.0

    items.sort(key=lambda item: -recorded(item))
