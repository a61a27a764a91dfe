import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

# Tests never reach the network: the hub libraries read local files only and send no telemetry.
for _variable in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"):
    os.environ.setdefault(_variable, "1")


class NetworkAttempt(AssertionError):
    """A test tried to open a connection to another machine."""


def _is_local(address) -> bool:
    if isinstance(address, (str, bytes)):  # a unix socket path
        return True
    host = str(address[0]) if isinstance(address, tuple) and address else ""
    return host in ("localhost", "", "0.0.0.0", "::", "::1") or host.startswith(("127.", "::ffff:127."))


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Every connection to a non-loopback address fails the test at once (recorded in the returned list)."""
    import socket

    attempts = []
    original_connect, original_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guard(original):
        def connect(self, address):
            if not _is_local(address):
                attempts.append(address)
                raise NetworkAttempt(f"a test tried to connect to {address!r}")
            return original(self, address)

        return connect

    monkeypatch.setattr(socket.socket, "connect", guard(original_connect))
    monkeypatch.setattr(socket.socket, "connect_ex", guard(original_connect_ex))
    return attempts


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch):
    """Each test starts from the installed plugins, with no plugin env variables set."""
    from grpo_core.plugins import use_registry

    for variable in ("GRPO_LOAD_PLUGINS", "GRPO_DISABLE_PLUGINS", "GRPO_STRICT_PLUGINS"):
        monkeypatch.delenv(variable, raising=False)
    use_registry(None)
    yield
    use_registry(None)


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    """A model cache shared by the session (tiny-random is built once)."""
    # Outside pytest's numbered temp folders, which pytest sessions started by tests may clean up.
    path = os.environ.get("GRPO_TEST_CACHE_DIR") or tempfile.mkdtemp(prefix="grpo-test-cache-")
    os.environ["GRPO_CACHE_DIR"] = path
    return Path(path)


@pytest.fixture(scope="session")
def fixture_plugin_site(tmp_path_factory):
    """The fixture plugin packages, installed with pip into a folder once a session."""
    target = tmp_path_factory.mktemp("site")
    for name in ("grpo-fixture-plugin", "grpo-fixture-broken"):
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
             "--target", str(target), str(FIXTURES / name)],
            check=True,
            capture_output=True,
        )
    return target


@pytest.fixture
def installed_fixture_plugins(fixture_plugin_site):
    """The fixture plugins on sys.path for one test: a test that runs after it in the same process finds only the
    plugins the environment installs (the broken one would warn in its output)."""
    sys.path.insert(0, str(fixture_plugin_site))
    yield fixture_plugin_site
    sys.path.remove(str(fixture_plugin_site))
    for module in [m for m in sys.modules if m.startswith("grpo_fixture")]:
        del sys.modules[module]


@pytest.fixture
def data_file(tmp_path):
    import json

    path = tmp_path / "data.jsonl"
    rows = [
        {"prompt": [{"role": "user", "content": f"Count to {i}"}], "answer": str(i)} for i in range(1, 9)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path
