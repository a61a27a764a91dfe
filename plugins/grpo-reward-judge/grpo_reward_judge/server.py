"""The embedded judge: ``transformers serve`` with SmolLM2-135M-Instruct on 127.0.0.1, started once per process.

It runs in its own session (a Ctrl-C meant for training does not reach it), is stopped at exit, and stops itself
when this process dies without an exit (its watchdog polls its parent).
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

EMBEDDED_MODEL = "smollm2-135m"
START_TIMEOUT_S = 300.0


@dataclass
class Server:
    url: str
    model: str
    process: subprocess.Popen
    log: Path
    started_s: float = 0.0  # seconds from start until it answered

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


_lock = threading.Lock()
_embedded: Server | None = None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(model_folder: str | None = None, port: int | None = None, log: Path | None = None) -> Server:
    """Start ``transformers serve`` on ``model_folder`` (default: the embedded SmolLM2) and wait until it answers."""
    if model_folder is None:
        from grpo_core import resolve_model

        model_folder = resolve_model(EMBEDDED_MODEL)
    port = port or free_port()
    if log is None:
        from grpo_reward_judge.client import cache_dir

        log = cache_dir() / "server-logs" / f"server-{os.getpid()}-{port}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, str(Path(__file__).with_name("_serve_child.py")), str(os.getpid()), model_folder,
               "--host", "127.0.0.1", "--port", str(port), "--device", "cpu", "--log-level", "warning"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"}
    started = time.monotonic()
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=env, start_new_session=True)
    server = Server(f"http://127.0.0.1:{port}", model_folder, process, log)
    atexit.register(server.stop)
    try:
        _wait_until_answering(server)
    except BaseException:
        server.stop()
        raise
    server.started_s = time.monotonic() - started
    return server


def _wait_until_answering(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    body = json.dumps({"model": server.model, "messages": [{"role": "user", "content": "Hi"}],
                       "max_tokens": 1}).encode()
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            tail = server.log.read_text(errors="replace")[-600:] if server.log.exists() else ""
            raise RuntimeError(f"the embedded judge server exited with {server.process.returncode} before "
                               f"answering; its log ({server.log}) ends: {tail}")
        try:
            request = urllib.request.Request(server.url + "/v1/chat/completions", data=body,
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=60) as response:
                json.loads(response.read())
                return
        except OSError:
            time.sleep(0.25)
    server.stop()
    raise RuntimeError(f"the embedded judge server did not answer within {START_TIMEOUT_S:g} s; see {server.log}")


def embedded_server() -> Server:
    """The embedded judge of this process, started on first use (and again if it died)."""
    global _embedded
    with _lock:
        if _embedded is None or _embedded.process.poll() is not None:
            _embedded = start_server()
        return _embedded
