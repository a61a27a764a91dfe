"""The judge reward on a step-sized batch through the embedded server: concurrency 1 and N, cold and cached.

    python benchmarks/bench_judge.py [--quick] [--batch 16] [--concurrency 8] [--step-seconds 60]

Prints the time to the server's first answer, then requests per second for each setting and the share of a
training step of ``--step-seconds`` that scoring one batch takes. Cold runs use an empty cache folder.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a batch of 4 (a smoke run)")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--step-seconds", type=float, default=60.0)
    args = parser.parse_args()
    batch = 4 if args.quick else args.batch
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import grpo_reward_judge
    from grpo_core import Reward
    from grpo_reward_judge.client import STATS
    from grpo_reward_judge.questions import QUESTIONS
    from grpo_reward_judge.server import embedded_server

    started = time.monotonic()
    server = embedded_server()
    print(f"embedded server answered {time.monotonic() - started:.1f} s after start ({server.url})")
    rows = [QUESTIONS[i % len(QUESTIONS)] for i in range(batch)]
    prompts, answers = [q for q, _ in rows], [a for _, a in rows]
    completions = [f"The answer is {a if i % 2 else a + '0'}. (draft {i})" for i, a in enumerate(answers)]
    for concurrency in (1, args.concurrency):
        with tempfile.TemporaryDirectory() as cache:
            os.environ["GRPO_CACHE_DIR"] = cache
            reward = Reward(grpo_reward_judge.SPEC, grpo_reward_judge.SPEC.resolve(
                {"max_concurrency": concurrency, "max_tokens": 8}))
            for label in ("cold", "cached"):
                STATS.clear()
                t = time.monotonic()
                reward.score(prompts=prompts, completions=completions, answer=answers)
                seconds = time.monotonic() - t
                print(f"concurrency {concurrency:2d} {label:6}: {batch} items in {seconds:6.2f} s = "
                      f"{batch / seconds:7.1f} items/s ({STATS['requests']} requests); "
                      f"{seconds / args.step_seconds:.1%} of a {args.step_seconds:g} s step")


if __name__ == "__main__":
    main()
