"""grpo-run serve, started for real on a free loopback port: the same scores as in-process under 16 concurrent
clients, OpenRLHF's request format, and hostile requests that never take it down."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from serve_helpers import TOKEN, Server, request

import grpo_core

pytestmark = pytest.mark.slow  # one server per module: a few seconds to start
WEIGHTS = {"math": 1.0, "xml-format": 0.5, "code": 2.0}
TESTS = json.dumps(["assert add(1, 2) == 3", "assert add(-4, 4) == 0"])
PROMPTS = ["What is 2+2? Put the answer in tags.\n", "Write add(a, b) in Python.\n"]
COMPLETIONS = [
    "<reasoning>two and two</reasoning><answer>4</answer>",
    "The answer is 5",
    "<answer>\\frac{8}{2}</answer>",
    "```python\ndef add(a, b):\n    return a + b\n```",
    "```python\ndef add(a, b):\n    return a - b\n```",
    "<reasoning>just guess</reasoning>\n<answer>four</answer>",
    "The answer is 4",
    "```python\nraise SystemExit(1)\n```",
]
ANSWERS = ["4", "4", "4", "3", "3", "4", "unreadable gold ~~", "4"]
NO_TESTS = json.dumps([])  # code scores None: nothing to run
TESTS_BY_ITEM = [TESTS, TESTS, NO_TESTS, TESTS, TESTS, TESTS, NO_TESTS, TESTS]


def sandbox_missing() -> str | None:
    from grpo_reward_code.sandbox import probe

    return probe("bubblewrap")


@pytest.fixture(scope="module")
def server():
    served = ["math", "xml-format=0.5", "json-schema=0"] + ([] if sandbox_missing() else ["code=2"])
    started = Server(*(arg for name in served for arg in ("--reward", name)), "--max-request-mb", "2",
                     "--openrlhf-reward", "math", "--openrlhf-reward", "xml-format=0.5",
                     *([] if sandbox_missing() else ["--openrlhf-reward", "code=2"]))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def local():
    names = ["math", "xml-format"] + ([] if sandbox_missing() else ["code"])
    return {reward.__name__: reward for reward in grpo_core.load_rewards(names)}


def batch(offset: int, size: int = 8) -> dict:
    items = [(offset + i) % len(COMPLETIONS) for i in range(size)]
    return {"completions": [COMPLETIONS[i] for i in items], "prompts": [PROMPTS[i % 2] for i in items],
            "answer": [ANSWERS[i] for i in items], "tests": [TESTS_BY_ITEM[i] for i in items]}


def in_process(reward, body: dict) -> list:
    columns = {source: body[source] for source in reward.columns.values()}
    return reward.score(prompts=body["prompts"], completions=body["completions"], **columns)


def test_each_reward_gives_in_process_scores_under_16_concurrent_clients(server, local):
    if "code" not in local:
        pytest.skip(f"reward code is not compared: no sandbox on this machine: {sandbox_missing()}")
    jobs = [(name, batch(offset)) for offset in range(16) for name in local]
    with ThreadPoolExecutor(16) as clients:
        answers = list(clients.map(lambda job: request(server.port, "POST", f"/rewards/{job[0]}", job[1]), jobs))
    for (name, body), (status, answer) in zip(jobs, answers):
        assert status == 200, answer
        assert answer["scores"] == in_process(local[name], body), name
        assert sum(answer["counts"].values()) == sum(reason is not None for reason in answer["unscored"])
    # the unreadable gold (math) and the row without tests (code) come back null, and counted
    assert all(None in answer["scores"] and answer["counts"]["unscorable"]
               for (name, _), (_, answer) in zip(jobs, answers) if name != "xml-format")


def openrlhf_request(body: dict) -> dict:
    labels = [json.dumps({"answer": answer, "tests": tests}) for answer, tests in zip(body["answer"], body["tests"])]
    return {"query": [p + c for p, c in zip(body["prompts"], body["completions"])], "prompts": body["prompts"],
            "labels": labels}


def test_openrlhf_endpoint_gives_in_process_scores_under_16_concurrent_clients(server, local):
    if "code" not in local:
        pytest.skip(f"reward code is not compared: no sandbox on this machine: {sandbox_missing()}")
    bodies = [batch(offset) for offset in range(16)]
    with ThreadPoolExecutor(16) as clients:
        answers = list(clients.map(lambda body: request(server.port, "POST", "/get_reward", openrlhf_request(body)),
                                   bodies))
    for body, (status, answer) in zip(bodies, answers):
        assert status == 200, answer
        expected_total = [0.0] * len(body["completions"])
        for name, reward in local.items():
            scores = in_process(reward, body)
            assert answer["extra_logs"][name] == [0.0 if s is None else s for s in scores], name
            assert answer["extra_logs"][f"{name}/unscored"] == [float(s is None) for s in scores], name
            expected_total = [t + WEIGHTS[name] * s if s is not None else t for t, s in zip(expected_total, scores)]
        assert answer["rewards"] == expected_total and answer["scores"] == expected_total


def test_the_catalogue_lists_bounds_columns_and_parameters(server):
    status, catalogue = request(server.port, "GET", "/rewards")
    assert status == 200
    math = next(entry for entry in catalogue["rewards"] if entry["name"] == "math")
    assert math["bounds"] == [0.0, 1.0] and math["columns"] == ["answer"]
    assert math["parameters"]["timeout"] == {"value": 5.0, "default": 5.0, "type": "float",
                                             "help": math["parameters"]["timeout"]["help"]}
    assert {"name": "xml-format", "weight": 0.5} in catalogue["openrlhf"]


def good_request_is_answered_right(server, local) -> None:
    body = batch(0, 4)
    status, answer = request(server.port, "POST", "/rewards/math", body)
    assert status == 200 and answer["scores"] == in_process(local["math"], body)


def raw_request(port: int, head: bytes, body: bytes) -> bytes:
    """Send ``head`` and ``body`` on one connection; what came back, or b"" when the server closed it."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        try:
            sock.sendall(head + body)
            sock.shutdown(socket.SHUT_WR)
        except OSError:  # the server answered and closed before reading it all
            pass
        received = b""
        try:
            for chunk in iter(lambda: sock.recv(65536), b""):
                received += chunk
        except ConnectionResetError:
            pass
        return received


HOSTILE = {
    "oversized, by its Content-Length": (lambda port: request(port, "POST", "/rewards/math", raw=b"x" * (3 << 20)),
                                         413),
    "oversized, chunked (no length)": (lambda port: (int(raw_request(port, (
        b"POST /rewards/math HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer "
        + TOKEN.encode() + b"\r\n\r\n"), b"".join(b"100000\r\n" + b"x" * 0x100000 + b"\r\n" for _ in range(3))
        + b"0\r\n\r\n").split(b" ")[1]), None), 413),
    "malformed JSON": (lambda port: request(port, "POST", "/rewards/math", raw=b'{"completions": ["a"'), 400),
    "JSON nested 100000 deep": (lambda port: request(port, "POST", "/rewards/math", raw=b"[" * 100000), 400),
    "not an object": (lambda port: request(port, "POST", "/rewards/math", [1, 2]), 422),
    "completions not a list": (lambda port: request(port, "POST", "/rewards/math",
                                                    {"completions": "4", "answer": ["4"]}), 422),
    "a completion that is a number": (lambda port: request(port, "POST", "/rewards/math",
                                                           {"completions": [4], "answer": ["4"]}), 422),
    "column of the wrong type": (lambda port: request(port, "POST", "/rewards/math",
                                                      {"completions": ["4"], "answer": "4"}), 422),
    "mismatched lengths": (lambda port: request(port, "POST", "/rewards/math",
                                                {"completions": ["4", "5"], "answer": ["4"]}), 422),
    "missing column": (lambda port: request(port, "POST", "/rewards/math", {"completions": ["4"]}), 422),
    "parameters in the body": (lambda port: request(port, "POST", "/rewards/math",
                                                    {"completions": ["4"], "answer": ["4"], "params": {}}), 422),
    "a batch the reward fails on as a whole": (lambda port: request(port, "POST", "/rewards/json-schema", {
        "completions": ["{}", "[]"], "schema": ["{not json", "{not json"]}), 422),
    "unknown reward": (lambda port: request(port, "POST", "/rewards/mth", {"completions": ["4"]}), 404),
    "OpenRLHF query not strings": (lambda port: request(port, "POST", "/get_reward", {"query": [1]}), 422),
    "no token": (lambda port: request(port, "POST", "/rewards/math", {"completions": ["4"], "answer": ["4"]},
                                      token=None), 401),
    "wrong token": (lambda port: request(port, "GET", "/rewards", token="guess"), 401),
}


@pytest.mark.parametrize("label", HOSTILE)
def test_a_hostile_request_gets_a_clear_error_and_the_server_answers_the_next(server, local, label):
    send, expected = HOSTILE[label]
    status, answer = send(server.port)
    assert status == expected, answer
    if answer is not None:
        assert isinstance(answer, dict) and answer["error"].strip(), answer
    assert server.alive()
    good_request_is_answered_right(server, local)


def test_a_1_mb_completion_is_scored_and_the_server_answers_the_next(server, local):
    status, answer = request(server.port, "POST", "/rewards/xml-format",
                             {"completions": ["<answer>" + "7" * (1 << 20) + "</answer>"]})
    assert status == 200 and len(answer["scores"]) == 1
    status, answer = request(server.port, "POST", "/rewards/math",
                             {"completions": ["The answer is " + "9" * (1 << 20)], "answer": ["4"]})
    assert status == 200 and len(answer["scores"]) == 1 and answer["scores"] != [1.0]
    good_request_is_answered_right(server, local)


def test_a_client_that_disconnects_mid_request_leaves_the_server_answering(server, local):
    for _ in range(3):
        head = (b"POST /rewards/math HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000"
                b"\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\n\r\n")
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(head + b'{"completions": ["4", "5"')  # then closed, 4977 bytes short
    assert server.alive()
    good_request_is_answered_right(server, local)


def test_health_needs_no_token(server):
    assert request(server.port, "GET", "/health", token=None) == (200, {"status": "ok", "rewards": sorted(
        ["math", "xml-format", "json-schema"] + ([] if sandbox_missing() else ["code"]))})


def test_a_non_loopback_address_without_a_token_is_refused():
    env = {key: value for key, value in __import__("os").environ.items() if key != "GRPO_SERVE_TOKEN"}
    result = subprocess.run([sys.executable, "-m", "grpo_core", "serve", "--host", "0.0.0.0", "--reward", "math"],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "Error: refusing to serve on 0.0.0.0 without a token: set the environment variable GRPO_SERVE_TOKEN to a "
        "secret (clients send 'Authorization: Bearer SECRET'), or listen on 127.0.0.1"]
