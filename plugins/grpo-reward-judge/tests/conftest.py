"""The plugin registered alone, and a tiny OpenAI-compatible server on a free loopback port that fails as told or
answers what a verdict function says (a fault injector, or test_plugin.py's reference judge: not a model; the slow
tests use the real embedded server)."""

import json
import os
import threading
import time
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from grpo_core.testing import fresh_registry_fixture, offline_hub, registered

offline_hub()
fresh_registry = fresh_registry_fixture()


@pytest.fixture(scope="session")
def shared_models(tmp_path_factory):
    """The models folder of the session's cache (the suite's, under make test): SmolLM2 is converted once for every
    embedded judge server, not once for each test's own cache."""
    root = os.environ.get("GRPO_TEST_CACHE_DIR") or str(tmp_path_factory.mktemp("judge-models"))
    folder = Path(root) / "models"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def judge_plugin(monkeypatch, tmp_path, shared_models):
    """This plugin and grpo-core's built-ins, whatever else is installed, with a cache of its own (its verdicts
    are the test's; its models/ is the session's)."""
    import grpo_reward_judge
    from grpo_reward_judge.client import STATS

    monkeypatch.setenv("GRPO_LOAD_PLUGINS", "")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "models").symlink_to(shared_models, target_is_directory=True)
    monkeypatch.setenv("GRPO_CACHE_DIR", str(tmp_path / "cache"))
    STATS.clear()
    with registered(grpo_reward_judge, distribution="grpo-reward-judge") as registry:
        yield registry



class FaultServer:
    """Answers ``/v1/chat/completions`` with the statuses in ``script`` in turn, then ``verdict`` with 200: a text,
    or a function of the request's message returning one (a judge that reads what it is asked)."""

    def __init__(self, script=(), verdict="7", delay_s=0.0):
        self.script, self.verdict, self.delay_s = list(script), verdict, delay_s
        self.requests: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append({"body": body, "authorization": self.headers.get("Authorization")})
                time.sleep(owner.delay_s)
                status = owner.script.pop(0) if owner.script else 200
                verdict = owner.verdict(body["messages"][-1]["content"]) if callable(owner.verdict) else owner.verdict
                answer = {"choices": [{"message": {"role": "assistant", "content": verdict}}]} \
                    if status == 200 else {"error": "injected fault"}
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def faults():
    servers = []

    def start(**kwargs):
        servers.append(FaultServer(**kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
