"""Requests per second of grpo-run serve's OpenRLHF endpoint, one client against 16 concurrent clients.

    python benchmarks/bench_serve.py [--requests 64] [--batch 64] [--clients 16] [--quick]

Starts `grpo-run serve --reward math` on a free loopback port and POSTs OpenRLHF requests ({query, prompts,
labels}) of --batch math completions to /get_reward: first one client after another (the anchor), then --clients
at once. Prints requests/s and completions/s of each and the ratio; every answer is checked to carry one reward
per query. The ratio shows how far concurrent requests overlap on the worker pool (at most the cores used).
"""

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post(port: int, body: bytes) -> dict:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        connection.request("POST", "/get_reward", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
    finally:
        connection.close()
    if response.status != 200:
        raise SystemExit(f"/get_reward answered {response.status}: {answer}")
    return answer


def batch(size: int, seed: int) -> bytes:
    prompts, queries, labels = [], [], []
    for i in range(size):
        a, b = (seed * 7 + i) % 50, (seed * 3 + i * 5) % 40
        prompt = f"What is {a} + {b}? Put the answer in <answer> tags.\n"
        answer = a + b if i % 3 else a + b + 1  # a third are wrong
        forms = [f"<answer>{answer}</answer>", f"The answer is {answer}.", f"\\boxed{{{answer}}}", f"{answer}.0"]
        prompts.append(prompt)
        queries.append(prompt + f"{a} plus {b}: " + forms[i % len(forms)])
        labels.append(str(a + b))
    return json.dumps({"query": queries, "prompts": prompts, "labels": labels}).encode()


def rate(port: int, bodies: list[bytes], clients: int, size: int) -> float:
    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        answers = list(pool.map(lambda body: post(port, body), bodies))
    elapsed = time.perf_counter() - start
    assert all(len(answer["rewards"]) == size for answer in answers)
    return len(bodies) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--quick", action="store_true", help="8 requests of 16 completions: checks it runs")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.batch = 8, 16
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen([sys.executable, "-m", "grpo_core", "serve", "--reward", "math", "--port", str(port),
                               "--log-level", "warning"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=2).request("GET", "/health")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"grpo-run serve did not start: {server.stderr.read()}")
                time.sleep(0.2)
        bodies = [batch(args.batch, seed) for seed in range(args.requests)]
        post(port, bodies[0])  # warm the worker pool (its processes import the math reward once)
        one = rate(port, bodies, 1, args.batch)
        many = rate(port, bodies, args.clients, args.batch)
    finally:
        server.kill()
        server.wait()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"grpo-run serve --reward math, POST /get_reward, {args.requests} requests of {args.batch} completions, "
          f"{cores} cores")
    print(f"1 client:    {one:8.2f} requests/s  {one * args.batch:9.1f} completions/s")
    print(f"{args.clients} clients:  {many:8.2f} requests/s  {many * args.batch:9.1f} completions/s")
    print(f"ratio (concurrent / one): {many / one:.2f}")


if __name__ == "__main__":
    main()
