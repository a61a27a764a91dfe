"""Starting a real ``grpo-run serve`` on a free loopback port and talking to it over plain HTTP (http.client)."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time

from grpo_core.testing import free_port  # noqa: F401  (imported from here by the serve tests)

TOKEN = "test-secret-token"


def request(port: int, method: str, path: str, body=None, token: str | None = TOKEN, raw: bytes | None = None,
            timeout: float = 120) -> tuple[int, object]:
    """``(status, decoded JSON or text)`` of one request; ``raw`` is sent as the body as it is."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    try:
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        text = response.read().decode()
    finally:
        connection.close()
    try:
        return response.status, json.loads(text)
    except ValueError:
        return response.status, text


class Server:
    """``grpo-run serve ARGS`` in a subprocess, answering on ``self.port`` once started."""

    def __init__(self, *args: str, token: str | None = TOKEN) -> None:
        self.port = free_port()
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        env.pop("GRPO_SERVE_TOKEN", None)
        if token:
            env["GRPO_SERVE_TOKEN"] = token
        self.process = subprocess.Popen(
            [sys.executable, "-m", "grpo_core", "serve", "--port", str(self.port), "--log-level", "warning", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"grpo-run serve exited {self.process.returncode}: {self.process.stderr.read()}")
            try:
                if request(self.port, "GET", "/health", timeout=2)[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("grpo-run serve did not answer /health within 120 s")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        self.process.stdout.close()
        self.process.stderr.close()
