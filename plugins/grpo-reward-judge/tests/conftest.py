"""The plugin registered alone, and a tiny OpenAI-compatible server on a free loopback port that fails as told
(a fault injector, not the judge: the judge's own tests use the real embedded server)."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from grpo_core.testing import offline_hub, registered

offline_hub()


@pytest.fixture
def judge_plugin(monkeypatch, tmp_path):
    """This plugin and grpo-core's built-ins, whatever else is installed, with a cache of its own."""
    import grpo_reward_judge
    from grpo_reward_judge.client import STATS

    monkeypatch.setenv("GRPO_LOAD_PLUGINS", "")
    monkeypatch.setenv("GRPO_CACHE_DIR", str(tmp_path / "cache"))
    STATS.clear()
    with registered(grpo_reward_judge, distribution="grpo-reward-judge") as registry:
        yield registry



class FaultServer:
    """Answers ``/v1/chat/completions`` with the statuses in ``script`` in turn, then ``verdict`` with 200."""

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
                answer = {"choices": [{"message": {"role": "assistant", "content": owner.verdict}}]} \
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
