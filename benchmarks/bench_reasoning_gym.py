"""The reasoning-gym reward against calling each task's own checker, on the same answers.

    .venv/bin/python benchmarks/bench_reasoning_gym.py [--items N] [--group G] [--batch B] [--distinct]

Per task, on the same completions, two anchors: "checker" is the task's checker called directly on
the already-extracted answers with already-decoded entries; "glue" is what a user writes by hand
without grpo-core, reasoning-gym's ``extract_answer`` on each completion and then the checker (on
the same decoded entries). "function" is the reward's batched function in-process (answer
extraction, entry decoding, number comparison or the checker); "adapter" is the reward as training
calls it, through grpo-core's ``load_rewards``, one call per batch of B completions. The "ratio"
columns are the function's and the adapter's time over the checker's, "/glue" the adapter's time
over the glue's, all measured in this run (best of several runs each).

A group of G completions per prompt holds, as GRPO samples them, the right answer (every other
completion) and wrong answers that all differ; with ``--distinct`` only the first is right, so no
two completions of a group give the same answer and nothing is shared within a group but the entry.

The six tasks of the total are judged in the training process (exact numbers for chain_sum,
gsm_symbolic and leg_counting; checkers read to be linear for the other three). The two tasks below
the total have checkers that run in worker processes under the per-item time limit, one call per
chunk of items: letter_jumble (a cheap checker: the cost of the round trips shows) and
polynomial_multiplication (sympy: the checker's own cost dominates). Since the plugin judges
letter_jumble and spell_backward by its own rules (grpo_reasoning_gym/rules.py), their rows measure
those rules in the training process against the bare checker; the tables below were taken before.

Measured on the 2-core development machine at ``nice -n 19`` beside another long CPU job, with
``--items 32`` (groups of 8, batches of 64):

    task                       checker us  glue us  function us  ratio  adapter us  ratio  /glue
    -- judged in the training process
    chain_sum                         0.5      2.0          0.9   1.84         1.2   2.31   0.59
    gsm_symbolic                      1.0      2.5          0.9   0.88         1.1   1.12   0.45
    leg_counting                      0.1      1.5          0.9   7.53         1.1   9.49   0.74
    spell_backward                    0.5      2.1          1.8   3.31         2.0   3.76   0.99
    word_sorting                      2.1      4.4          3.2   1.53         3.4   1.64   0.78
    number_sorting                   12.4     15.1          6.3   0.51         6.5   0.53   0.43
    all of these                                                  0.84               0.92   0.56
    -- checkers in worker processes
    letter_jumble                     1.0      3.5          4.9   4.84         5.2   5.07   1.46
    polynomial_multiplication       721.6    743.5        247.7   0.34       249.0   0.35   0.33
    all of these                                                  0.35               0.35   0.34

and with ``--distinct`` (nothing shared within a group but the entry):

    task                       checker us  glue us  function us  ratio  adapter us  ratio  /glue
    -- judged in the training process
    chain_sum                         0.5      2.0          0.9   1.71         1.2   2.16   0.57
    gsm_symbolic                      1.0      2.5          0.9   0.87         1.1   1.11   0.45
    leg_counting                      0.1      1.5          0.9   6.20         1.1   7.97   0.73
    spell_backward                    0.8      2.4          2.2   2.65         2.5   2.95   1.03
    word_sorting                      2.5      4.8          4.2   1.69         4.5   1.79   0.94
    number_sorting                    5.3      7.9          7.3   1.38         7.8   1.46   0.98
    all of these                                                  1.59               1.75   0.86
    -- checkers in worker processes
    letter_jumble                     1.7      4.4          6.9   4.12         7.1   4.29   1.61
    polynomial_multiplication       740.9    753.9        427.2   0.58       457.3   0.62   0.61
    all of these                                                  0.58               0.63   0.61

Before plain integers were compared as ints and the checker was called inline, in the same runs, the
function took 1.3-1.4 us an answer on the three number tasks (1.7 us with ``--distinct``), and the
six tasks through the adapter cost 1.09 times the checkers and 0.65 times the glue (2.11 and 1.03
with ``--distinct``). The reward called per item, before the batch, cost 11.8 times the checkers
(measured with an earlier version of this benchmark).

Where the rest goes: the checker anchor is handed its answers already extracted, and finding the
answer tag (the searches, the slice and the strip) takes about 0.4 us an answer in this loop, more
than leg_counting's whole checker (reasoning-gym's default string comparison, 0.1 us), so such a
task cannot come within 10% of its bare checker. Tasks with a checker also decode each group's JSON
entry, 0.3-0.6 us an answer at groups of 8, which both anchors get already decoded.
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


def measure(task: str, options, reward) -> tuple[float, float, float, float, int]:
    from reasoning_gym.utils import extract_answer

    from grpo_reasoning_gym.dataset import generate_rows
    from grpo_reasoning_gym.entries import load_entry
    from grpo_reasoning_gym.reward import checker, reasoning_gym_rewards

    rows = generate_rows(task, options.items, seed=0)
    items = completions_for(rows, options.group, options.distinct)
    score_answer = checker(task)
    entries = {row["entry"]: load_entry(row["entry"]) for row in rows}
    decoded = [(answer, entries[row["entry"]]) for _, answer, row in items]
    by_hand = [(completion, entries[row["entry"]]) for completion, _, row in items]
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

    def glue():
        for completion, entry in by_hand:
            try:
                score_answer(extract_answer(completion), entry)
            except Exception:
                pass

    def function():
        for completions, columns in batches:
            load_entry.cache_clear()  # each batch decodes its entries, as in training
            reasoning_gym_rewards(completions, **columns)

    def adapter():
        for completions, columns in batches:
            load_entry.cache_clear()
            reward.score(prompts=[""] * len(completions), completions=completions, **columns)

    adapter()  # start the workers and build the checkers
    times = tuple(best_of(options.runs, run) for run in (direct, glue, function, adapter))
    return (*times, len(items))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=64, help="prompts per task")
    parser.add_argument("--group", type=int, default=8, help="completions per prompt, as GRPO samples them")
    parser.add_argument("--batch", type=int, default=64, help="completions per reward call, as training makes them")
    parser.add_argument("--runs", type=int, default=7, help="runs per measurement; the best counts")
    parser.add_argument("--distinct", action="store_true", help="one right answer per group, the rest all different")
    parser.add_argument("--quick", action="store_true", help="4 prompts per task, one run: checks the benchmark runs")
    options = parser.parse_args()
    if options.quick:
        options.items, options.runs = 4, 1

    from grpo_core import load_rewards

    (reward,) = load_rewards(["reasoning-gym"])
    print(f"{'task':<26}{'checker us':>11}{'glue us':>9}{'function us':>13}{'ratio':>7}{'adapter us':>12}"
          f"{'ratio':>7}{'/glue':>7}")
    for title, tasks in (("judged in the training process", TASKS), ("checkers in worker processes", WORKER_TASKS)):
        print(f"-- {title}")
        totals = [0.0, 0.0, 0.0, 0.0]
        for task in tasks:
            *times, n = measure(task, options, reward)
            totals = [t + s for t, s in zip(totals, times)]
            checker_s, glue_s, function_s, adapter_s = times
            print(f"{task:<26}{checker_s / n * 1e6:>11.1f}{glue_s / n * 1e6:>9.1f}{function_s / n * 1e6:>13.1f}"
                  f"{function_s / checker_s:>7.2f}{adapter_s / n * 1e6:>12.1f}{adapter_s / checker_s:>7.2f}"
                  f"{adapter_s / glue_s:>7.2f}")
        checker_s, glue_s, function_s, adapter_s = totals
        print(f"{'all of these':<26}{'':>11}{'':>9}{'':>13}{function_s / checker_s:>7.2f}{'':>12}"
              f"{adapter_s / checker_s:>7.2f}{adapter_s / glue_s:>7.2f}")
    print("ratio = time / the checker's own time on the same answers (target through the adapter: <= 1.10);")
    print("/glue = the adapter's time / the hand-written glue's (reasoning-gym's extract_answer, then the checker)")


if __name__ == "__main__":
    main()
