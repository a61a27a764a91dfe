"""The reasoning-gym reward against calling each task's own checker, on the same answers.

    .venv/bin/python benchmarks/bench_reasoning_gym.py [--items N] [--group G] [--batch B] [--distinct]

Per task, on the same completions: the anchor is the task's checker called directly on the
already-extracted answers with already-decoded entries; "function" is the reward's batched function
in-process (answer extraction, entry decoding, number comparison or the checker); "adapter" is the
reward as training calls it, through grpo-core's ``load_rewards``, one call per batch of B
completions. Ratios are against the anchor measured in this run (best of several runs each).

A group of G completions per prompt holds, as GRPO samples them, the right answer (every other
completion) and wrong answers that all differ; with ``--distinct`` only the first is right, so no
two completions of a group give the same answer and nothing is shared within a group but the entry.

The six tasks of the total are judged in the training process (exact numbers for chain_sum,
gsm_symbolic and leg_counting; checkers read to be linear for the other three). The two tasks below
the total have checkers that run in worker processes under the per-item time limit, one call per
chunk of items: letter_jumble (a cheap checker: the cost of the round trips shows) and
polynomial_multiplication (sympy: the checker's own cost dominates).

Measured on the 2-core development machine while other work ran, ``nice -n 19`` and ``--items 32``.
Before, with the earlier version of this benchmark (groups of 8 whose wrong answers were all the gold
with a "1" added, the reward called per item, through the adapter one worker round trip per item):

    task             checker us  function us  ratio  adapter us   ratio
    chain_sum               0.5          6.8  12.78        49.3    93.1
    gsm_symbolic            1.0          4.8   4.69        55.2    53.9
    leg_counting            0.1          4.8  33.32        43.3   301.1
    spell_backward          0.6          2.3   3.98        42.9    75.2
    word_sorting            3.0          5.7   1.88        48.3    16.0
    number_sorting         21.9         17.4   0.80        81.7     3.7
    all                                        1.53                11.8

After (the batch reward: numbers and linear checkers in-process, other checkers in chunks; groups of
8, batches of 64):

    task                       checker us  function us  ratio  adapter us  ratio
    -- judged in the training process
    chain_sum                         0.5          1.3   2.69         1.6   3.18
    gsm_symbolic                      1.0          1.3   1.32         1.6   1.57
    leg_counting                      0.1          1.3  10.78         1.5  12.74
    spell_backward                    0.5          2.1   3.83         2.3   4.28
    word_sorting                      2.1          3.5   1.68         3.7   1.81
    number_sorting                   12.1          6.4   0.53         6.7   0.56
    all of these                                         0.97               1.07
    -- checkers in worker processes
    letter_jumble                     1.1          6.7   6.28         7.0   6.51
    polynomial_multiplication       891.1        557.1   0.63       515.1   0.58
    all of these                                         0.63               0.59
    ratio = time / the checker's own time on the same answers (target through the adapter: <= 1.10)

and with ``--distinct`` (nothing shared within a group but the entry):

    task                       checker us  function us  ratio  adapter us  ratio
    -- judged in the training process
    chain_sum                         0.5          1.7   3.20         1.9   3.63
    gsm_symbolic                      1.0          1.6   1.65         1.9   1.90
    leg_counting                      0.1          1.6  12.20         1.9  13.88
    spell_backward                    0.8          2.6   3.08         2.9   3.39
    word_sorting                      2.5          4.7   1.90         4.9   2.00
    number_sorting                    5.3          7.8   1.47         8.1   1.52
    all of these                                         1.95               2.09
    -- checkers in worker processes
    letter_jumble                     1.6          7.8   4.76         8.1   4.93
    polynomial_multiplication      1107.1       1034.3   0.93       882.4   0.80
    all of these                                         0.94               0.80
    ratio = time / the checker's own time on the same answers (target through the adapter: <= 1.10)
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TASKS = ("chain_sum", "gsm_symbolic", "leg_counting", "spell_backward", "word_sorting", "number_sorting")
WORKER_TASKS = ("letter_jumble", "polynomial_multiplication")


def best_of(runs: int, func) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def completions_for(rows, group: int, distinct: bool) -> list[tuple[str, str, dict]]:
    """(completion, extracted answer, row) for each completion of each prompt's group."""
    items = []
    for row in rows:
        gold = row["answer"].strip()
        for k in range(group):
            right = k == 0 if distinct else k % 2 == 0
            answer = gold if right else f"{gold}{k}"
            items.append((f"Working it out, step {k}.\n<answer>{answer}</answer>", answer, row))
    return items


def measure(task: str, options, reward) -> tuple[float, float, float, int]:
    from grpo_reasoning_gym.dataset import generate_rows
    from grpo_reasoning_gym.entries import load_entry
    from grpo_reasoning_gym.reward import checker, reasoning_gym_rewards

    rows = generate_rows(task, options.items, seed=0)
    items = completions_for(rows, options.group, options.distinct)
    score_answer = checker(task)
    entries = {row["entry"]: load_entry(row["entry"]) for row in rows}
    decoded = [(answer, entries[row["entry"]]) for _, answer, row in items]
    batches = []
    for start in range(0, len(items), options.batch):
        part = items[start : start + options.batch]
        columns = {key: [row[key] for _, _, row in part] for key in ("answer", "task", "entry")}
        batches.append(([completion for completion, _, _ in part], columns))

    def direct():
        for answer, entry in decoded:
            try:
                score_answer(answer, entry)
            except Exception:
                pass

    def function():
        for completions, columns in batches:
            load_entry.cache_clear()  # each batch decodes its entries, as in training
            reasoning_gym_rewards(completions, **columns)

    def adapter():
        for completions, columns in batches:
            load_entry.cache_clear()
            reward(prompts=[""] * len(completions), completions=completions, **columns)

    adapter()  # start the workers and build the checkers
    times = (best_of(options.runs, direct), best_of(options.runs, function), best_of(options.runs, adapter))
    return (*times, len(items))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=64, help="prompts per task")
    parser.add_argument("--group", type=int, default=8, help="completions per prompt, as GRPO samples them")
    parser.add_argument("--batch", type=int, default=64, help="completions per reward call, as training makes them")
    parser.add_argument("--runs", type=int, default=7, help="runs per measurement; the best counts")
    parser.add_argument("--distinct", action="store_true", help="one right answer per group, the rest all different")
    options = parser.parse_args()

    from grpo_core import load_rewards

    (reward,) = load_rewards(["reasoning-gym"])
    print(f"{'task':<26}{'checker us':>11}{'function us':>13}{'ratio':>7}{'adapter us':>12}{'ratio':>7}")
    for title, tasks in (("judged in the training process", TASKS), ("checkers in worker processes", WORKER_TASKS)):
        print(f"-- {title}")
        totals = [0.0, 0.0, 0.0]
        for task in tasks:
            *times, n = measure(task, options, reward)
            totals = [t + s for t, s in zip(totals, times)]
            print(f"{task:<26}{times[0] / n * 1e6:>11.1f}{times[1] / n * 1e6:>13.1f}{times[1] / times[0]:>7.2f}"
                  f"{times[2] / n * 1e6:>12.1f}{times[2] / times[0]:>7.2f}")
        print(f"{'all of these':<26}{'':>11}{'':>13}{totals[1] / totals[0]:>7.2f}{'':>12}{totals[2] / totals[0]:>7.2f}")
    print("ratio = time / the checker's own time on the same answers (target through the adapter: <= 1.10)")


if __name__ == "__main__":
    main()
