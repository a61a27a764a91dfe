"""What makes a small model call a tool at all: the share of episodes that call one, and the accuracy, by the number
of worked examples in the prompt and the sampling temperature.

    python benchmarks/bench_tool_prompt.py [--model smollm2-135m] [--examples 0,1,2] [--temperatures 0,1.0]
                                           [-n 32] [--max-new-tokens 128] [--seed 0] [--quick]

Each cell is `grpo-run sample --env calculator --dataset products --dataset-arg split=test --dataset-arg
worked_examples=K --reward math --temperature T` on the same n held-out problems: one episode per problem, greedy at
temperature 0. It prints, per cell, the share of episodes that called a tool (tool-use), the math accuracy of the
final answers with the paired standard error of the accuracy, and the seconds the cell took. GRPO can only reinforce
what the policy samples: a prompt under which the model never calls a tool at the training temperature gives every
completion of a group the same tool reward, and so nothing to learn from.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import tempfile
import time
from pathlib import Path

from bench_default_run import console_script  # one copy for the benchmarks that run grpo-run


def cell(model: str, examples: int, temperature: float, n: int, tokens: int, seed: int) -> dict:
    """One sample run: the means, tool-use share and per-episode scores."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "samples.jsonl"
        started = time.monotonic()
        done = subprocess.run(
            [console_script("grpo-run"), "sample", "--model", model, "--dataset", "products",
             "--dataset-arg", "split=test", "--dataset-arg", f"size={max(n, 200)}", "--dataset-arg", f"seed={seed}",
             "--dataset-arg", f"worked_examples={examples}", "--reward", "math", "--env", "calculator",
             "-n", str(n), "--max-new-tokens", str(tokens), "--temperature", str(temperature), "--output", str(out)],
            capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        seconds = time.monotonic() - started
        if done.returncode != 0:
            raise SystemExit(f"grpo-run sample failed ({done.returncode}):\n{done.stderr[-2000:]}")
        samples = [json.loads(line) for line in out.read_text().splitlines()]
    right = [float(s["math"] or 0.0) for s in samples]
    called = [1.0 if s["tool_calls"] else 0.0 for s in samples]
    mean = sum(right) / len(right)
    error = math.sqrt(sum((x - mean) ** 2 for x in right) / (len(right) - 1) / len(right)) if len(right) > 1 else 0.0
    return {"examples": examples, "temperature": temperature, "n": len(samples), "tool_use": sum(called) / len(called),
            "math": mean, "math_se": error, "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--examples", default="0,1,2", help="worked examples per prompt, comma-separated")
    parser.add_argument("--temperatures", default="0,1.0", help="sampling temperatures, comma-separated (0: greedy)")
    parser.add_argument("-n", type=int, default=32, help="held-out problems per cell")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0, help="seed of the held-out problems")
    parser.add_argument("--quick", action="store_true", help="the tiny test model on 2 problems, one cell (that it runs)")
    args = parser.parse_args()
    if args.quick:
        args.model, args.examples, args.temperatures, args.n, args.max_new_tokens = "tiny-random", "2", "0", 2, 16
    print(f"model {args.model}, {args.n} held-out products problems (seed {args.seed}), calculator environment, "
          f"{args.max_new_tokens} tokens per episode, load {os.getloadavg()[0]:.1f}")
    print(f"{'examples':>8}  {'temperature':>11}  {'tool-use':>8}  {'math':>6}  {'± se':>6}  {'seconds':>7}")
    for examples in (int(x) for x in args.examples.split(",")):
        for temperature in (float(x) for x in args.temperatures.split(",")):
            row = cell(args.model, examples, temperature, args.n, args.max_new_tokens, args.seed)
            print(f"{row['examples']:>8}  {row['temperature']:>11.1f}  {row['tool_use']:>8.3f}  {row['math']:>6.3f}  "
                  f"{row['math_se']:>6.3f}  {row['seconds']:>7.0f}", flush=True)


if __name__ == "__main__":
    main()
