"""The reasoning-gym reward against calling each task's own checker, on the same answers.

    .venv/bin/python benchmarks/bench_reasoning_gym.py [--items N] [--group G]

Per task: the checker called directly on the extracted answers (the anchor), the reward's
function in-process (extraction, entry decoding, number comparison or the checker), and the
reward through grpo-core's adapter, which runs each item in a worker process under the per-item
timeout. Ratios are against the anchor measured in this run.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TASKS = ("chain_sum", "gsm_symbolic", "leg_counting", "spell_backward", "word_sorting", "number_sorting")


def best_of(runs: int, func) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=64, help="prompts per task")
    parser.add_argument("--group", type=int, default=8, help="completions per prompt, as GRPO samples them")
    options = parser.parse_args()

    from grpo_core import load_rewards

    from grpo_reasoning_gym.dataset import generate_rows
    from grpo_reasoning_gym.entries import load_entry
    from grpo_reasoning_gym.reward import checker, reasoning_gym_reward

    (reward,) = load_rewards(["reasoning-gym"])
    print(f"{'task':<16}{'checker us':>12}{'function us':>13}{'ratio':>7}{'adapter us':>12}{'ratio':>8}")
    totals = [0.0, 0.0, 0.0]
    for task in TASKS:
        rows = generate_rows(task, options.items, seed=0)
        items = []
        for row in rows:
            for k in range(options.group):  # half right, half wrong, like a GRPO group
                answer = row["answer"] if k % 2 == 0 else row["answer"] + "1"
                items.append((f"Working.\n<answer>{answer}</answer>", answer, row))
        score_answer = checker(task)
        entries = {row["entry"]: load_entry(row["entry"]) for row in rows}

        def direct():
            for _, answer, row in items:
                score_answer(answer, entries[row["entry"]])

        def function():
            for completion, _, row in items:
                reasoning_gym_reward(completion, row["answer"], task, row["entry"])

        columns = {key: [row[key] for _, _, row in items] for key in ("answer", "task", "entry")}
        completions = [completion for completion, _, _ in items]

        def adapter():
            reward(prompts=[""] * len(items), completions=completions, **columns)

        adapter()  # start the workers and import reasoning_gym in them
        times = [best_of(5, direct), best_of(5, function), best_of(3, adapter)]
        totals = [t + s for t, s in zip(totals, times)]
        n = len(items)
        print(f"{task:<16}{times[0] / n * 1e6:>12.1f}{times[1] / n * 1e6:>13.1f}{times[1] / times[0]:>7.2f}"
              f"{times[2] / n * 1e6:>12.1f}{times[2] / times[0]:>8.1f}")
    print(f"{'all':<16}{'':>12}{'':>13}{totals[1] / totals[0]:>7.2f}{'':>12}{totals[2] / totals[0]:>8.1f}")
    print("ratio = time / the checker's own time on the same answers (target for the function: <= 1.10)")


if __name__ == "__main__":
    main()
