"""Where a GRPO step's reward time goes: one step-sized batch of a realistic mix, scored every way, in one run.

    .venv/bin/python benchmarks/bench_reward_step.py [--prompts 64] [--group 16] [--code-share 0.25] [--quick]
    .venv/bin/python benchmarks/bench_reward_step.py --ray-only [--repeat 3]

The batch: ``--prompts`` prompts x ``--group`` completions; a ``--code-share`` of the prompts are code-tasks
(the completions: the reference program or its buggy version), the rest math with LaTeX answers (right and wrong
forms, as bench_math draws them). Like TRL, every reward scores every completion: math, code, xml-format and
length (a row that is not a reward's own is unscored by it at once). Printed side by side:

- the hand-written baseline a TRL user writes today: TRL's ``accuracy_reward`` for math, a plain
  ``subprocess.run`` of each program with its asserts, a regex for the format and a length ratio, one after the other;
- grpo-core one reward after the other (as it was), on 2 worker processes (the former default);
- grpo-core now: the rewards of the step at once, as TRL runs them (quick ones first, then the ConcurrentRewards
  together on an event loop), on every core; and with 1 .. all workers (scaling);
- the Ray backend on a local cluster (when ray is installed: pip install "grpo-core[ray]").

Each grpo-core way gives the same scores (checked, identical lists). Targets on a 2-core machine: the concurrent
batch at most 0.7 of one-after-the-other when no reward takes most of the time, and at most 0.5 of the baseline;
on Ray, at once at most 1.2 x the local pool at once and no slower than one after the other.

``--ray-only`` times only what the Ray targets need, in rounds: the local pool at once on every core (the anchor),
then the Ray backend one after the other and at once; each ratio is the median over rounds of the two times of the
same round, and the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_math import latex_case  # noqa: E402  (same LaTeX answers as the math benchmark)

REWARDS = ("math", "code", "xml-format", "length")
FORMAT = re.compile(r"^<reasoning>.*?</reasoning>\s*<answer>.*?</answer>\s*$", re.S)


def make_batch(prompts: int, group: int, code_share: float, seed: int = 0) -> dict:
    """TRL's reward arguments for one step: prompts, completions and the dataset columns, one per completion."""
    from grpo_reward_code.tasks import load_code_tasks

    rng = random.Random(seed)
    code_prompts = round(prompts * code_share)
    tasks = list(load_code_tasks(size=max(1, code_prompts), seed=seed))[:code_prompts]
    batch = {"prompts": [], "completions": [], "answer": [], "tests": []}
    for p in range(prompts):
        if p < code_prompts:
            row = tasks[p]
            buggy = row["solution"].replace("return ", "return 1 + ", 1)
            for i in range(group):
                program = row["solution"] if i % 2 == 0 else buggy
                batch["completions"].append(f"<reasoning>Write it.</reasoning>\n<answer>\n```python\n{program}```\n</answer>")
                batch["answer"].append(None)
                batch["tests"].append(row["tests"])
                batch["prompts"].append(f"code {p}")
        else:
            gold, same, different = latex_case(rng)
            for i in range(group):
                answer = rng.choice(same if i % 2 == 0 else different)
                text = f"We simplify step by step, attempt {i}.\nThe final answer is $\\boxed{{{answer}}}$."
                batch["completions"].append(text if i % 4 else f"<reasoning>{text}</reasoning>\n<answer>{answer}</answer>")
                batch["answer"].append(gold)
                batch["tests"].append(None)
                batch["prompts"].append(f"math {p}")
    return batch


def baseline(batch: dict) -> tuple[dict, float]:
    """What a TRL user writes by hand: TRL's accuracy_reward, subprocess.run per program, a regex, a length ratio."""
    import logging

    from trl.rewards import accuracy_reward

    logging.getLogger("math_verify").setLevel(logging.ERROR)
    times, start = {}, time.perf_counter()
    math_rows = [i for i, a in enumerate(batch["answer"]) if a is not None]
    t = time.perf_counter()
    accuracy_reward(completions=[[{"role": "assistant", "content": batch["completions"][i]}] for i in math_rows],
                    solution=[f"${batch['answer'][i]}$" for i in math_rows])
    times["math"] = time.perf_counter() - t
    t = time.perf_counter()
    for completion, tests in zip(batch["completions"], batch["tests"]):
        if tests is None:
            continue
        program = completion.split("```python\n", 1)[1].split("```", 1)[0]
        try:
            subprocess.run([sys.executable, "-c", program + "\n" + "\n".join(tests)], capture_output=True, timeout=10)
        except subprocess.TimeoutExpired:
            pass
    times["code"] = time.perf_counter() - t
    t = time.perf_counter()
    [1.0 if FORMAT.match(c) else 0.0 for c in batch["completions"]]
    times["xml-format"] = time.perf_counter() - t
    t = time.perf_counter()
    [min(1.0, len(c) / 300) for c in batch["completions"]]
    times["length"] = time.perf_counter() - t
    return times, time.perf_counter() - start


def one_after_another(rewards, batch) -> tuple[dict, dict, float]:
    scores, times, start = {}, {}, time.perf_counter()
    for reward in rewards:
        t = time.perf_counter()
        scores[reward.__name__] = reward.score(**batch)
        times[reward.__name__] = time.perf_counter() - t
    return scores, times, time.perf_counter() - start


def at_once(rewards, batch) -> tuple[dict, float]:
    """As TRL 1.16's _calculate_rewards: the plain rewards one by one, then the awaited ones together."""
    from grpo_core import ConcurrentReward

    async def gather():
        waiting = [r for r in rewards if isinstance(r, ConcurrentReward)]
        return dict(zip((r.__name__ for r in waiting), await asyncio.gather(*(r(**batch) for r in waiting))))

    start = time.perf_counter()
    scores = {r.__name__: r(**batch) for r in rewards if not isinstance(r, ConcurrentReward)}
    scores.update(asyncio.run(gather()))
    return scores, time.perf_counter() - start


def warm(rewards, batch, n: int = 32) -> None:
    """Start the workers and import what they need, on items other than the timed ones."""
    from grpo_core.rewards.backend import scoring_pool

    size = scoring_pool().size
    head = {key: values[-n * size:] + values[:n * size] for key, values in batch.items()}
    for reward in rewards:
        reward.score(**head)


def same(scores: dict, reference: dict, way: str) -> None:
    """Stop with the rewards and items ``way`` scored differently from the reference (a time limit that fired under
    load shows here as None against a score)."""
    differ = {name: [(i, a, b) for i, (a, b) in enumerate(zip(scores[name], reference[name])) if a != b]
              for name in reference}
    differ = {name: items for name, items in differ.items() if items}
    if differ:
        raise SystemExit(f"{way} scored differently from the reference: " + "; ".join(
            f"{name}: {len(items)} items, e.g. item {items[0][0]}: {items[0][1]!r} against {items[0][2]!r}"
            for name, items in differ.items()))


def ray_rounds(rewards, batch, rounds: int) -> None:
    """The local pool at once (the anchor) and the Ray backend one after the other and at once, round by round."""
    from grpo_core import configure_scoring

    cores = len(os.sched_getaffinity(0))
    print(f"{len(batch['completions'])} completions, {cores} cores, load average before: "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    times: dict[str, list[float]] = {"local, at once": [], "ray, one after the other": [], "ray, at once": []}
    try:
        for _ in range(rounds):
            configure_scoring()
            warm(rewards, batch)
            reference, wall = at_once(rewards, batch)
            times["local, at once"].append(wall)
            configure_scoring(backend="ray")
            warm(rewards, batch)
            scores, _, wall = one_after_another(rewards, batch)
            same(scores, reference, "the Ray backend, one after the other")
            times["ray, one after the other"].append(wall)
            scores, wall = at_once(rewards, batch)
            same(scores, reference, "the Ray backend, at once")
            times["ray, at once"].append(wall)
    finally:
        configure_scoring()
    for way, walls in times.items():
        print(f"{way:<28} " + "  ".join(f"{w:6.2f}" for w in walls) + f"   median {statistics.median(walls):.2f} s")
    anchor, seq, now = times["local, at once"], times["ray, one after the other"], times["ray, at once"]
    print(f"Ray at once / local pool at once: {statistics.median(r / a for r, a in zip(now, anchor)):.2f} (target "
          f"<= 1.2); Ray at once / Ray one after the other: {statistics.median(r / s for r, s in zip(now, seq)):.2f} "
          f"(target <= 1.0)")
    print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


def best(function, repeat: int):
    results = [function() for _ in range(repeat)]
    return min(results, key=lambda result: result[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--group", type=int, default=16)
    parser.add_argument("--code-share", type=float, default=0.25)
    parser.add_argument("--repeat", type=int, default=2, help="timed runs of each way; the best is shown")
    parser.add_argument("--no-ray", action="store_true", help="leave out the Ray backend")
    parser.add_argument("--quick", action="store_true", help="a tiny batch: checks the benchmark runs")
    parser.add_argument("--ray-only", action="store_true", help="only the Ray targets' ways, --repeat rounds")
    args = parser.parse_args()
    if args.quick:
        args.prompts, args.group, args.repeat = 4, 4, 1
    from grpo_core import configure_scoring, load_rewards

    cores = len(os.sched_getaffinity(0))
    batch = make_batch(args.prompts, args.group, args.code_share)
    n = len(batch["completions"])
    rewards = load_rewards(list(REWARDS))
    if args.ray_only:
        ray_rounds(rewards, batch, args.repeat)
        return 0
    rows = []

    base_times, base_wall = best(lambda: baseline(batch), args.repeat)
    rows.append(("hand-written TRL baseline, one after the other", base_times, base_wall))

    configure_scoring(workers=min(2, cores))  # the former default: min(2, cores)
    warm(rewards, batch)
    reference, seq_times, seq_wall = best(lambda: one_after_another(rewards, batch), args.repeat)
    rows.append((f"grpo-core, one after the other, {min(2, cores)} workers (as it was)", seq_times, seq_wall))

    scaling = {}
    for workers in sorted({1, 2, cores} if not args.quick else {1, cores}):
        configure_scoring(workers=workers)
        warm(rewards, batch)
        scores, wall = best(lambda: at_once(rewards, batch), args.repeat)
        assert scores == reference, f"{workers} workers at once scored differently from one after the other"
        scaling[workers] = wall
        if workers == cores:
            _, times, _ = one_after_another(rewards, batch)
            rows.append((f"grpo-core, at once, {cores} workers (now)", times, wall))
    math_rows = [i for i, answer in enumerate(batch["answer"]) if answer is not None]
    math_batch = {key: [values[i] for i in math_rows] for key, values in batch.items()}
    math_scaling = {}
    for workers in sorted({1, cores}):  # the math reward alone on the step's LaTeX completions
        configure_scoring(workers=workers)
        warm(rewards[:1], batch)
        math_scaling[workers] = best(lambda: one_after_another(rewards[:1], math_batch), args.repeat)[-1]
    ray_wall = ray_seq = None
    if not args.no_ray and not args.quick:
        try:
            import ray  # noqa: F401

            configure_scoring(backend="ray")
            warm(rewards, batch)
            scores, ray_times, ray_seq = best(lambda: one_after_another(rewards, batch), args.repeat)
            assert scores == reference, "the Ray backend scored differently from the local pool"
            rows.append(("grpo-core, one after the other, Ray backend (local cluster)", ray_times, ray_seq))
            scores, ray_wall = best(lambda: at_once(rewards, batch), args.repeat)
            assert scores == reference, "the Ray backend scored differently from the local pool"
            rows.append(("grpo-core, at once, Ray backend (local cluster)", {}, ray_wall))
        except ImportError:
            print("ray is not installed: the Ray backend is left out (pip install \"grpo-core[ray]\")")
        finally:
            configure_scoring()

    load = os.getloadavg()[0]
    print(f"{n} completions ({args.prompts} prompts x {args.group}; {args.code_share:.0%} of prompts code), "
          f"{cores} cores, load average {load:.1f} at the end")
    print(f"{'way':<58} {'wall s':>7}  " + "  ".join(f"{name + ' /s':>14}" for name in REWARDS))
    for name, times, wall in rows:
        rates = "  ".join(f"{n / times[r]:>14.0f}" if times.get(r) else f"{'':>14}" for r in REWARDS)
        print(f"{name:<58} {wall:>7.2f}  {rates}")
    print("scaling, at once: " + ", ".join(f"{w} worker{'s' * (w > 1)} {s:.2f} s" for w, s in scaling.items()))
    print(f"LaTeX math alone ({len(math_rows)} completions): " + ", ".join(
        f"{w} worker{'s' * (w > 1)} {t:.2f} s" for w, t in math_scaling.items())
        + f" ({math_scaling[1] / math_scaling[cores]:.2f}x)")
    now = scaling[cores]
    largest = max(seq_times.values()) / seq_wall
    print(f"at once / one after the other: {now / seq_wall:.2f} (target <= 0.7; the largest reward takes "
          f"{largest:.0%} of one-after-the-other)")
    print(f"at once / hand-written baseline: {now / base_wall:.2f} (target <= 0.5)")
    if ray_wall is not None:
        print(f"Ray backend / local pool, at once: {ray_wall / now:.2f}; on Ray, at once / one after the other: "
              f"{ray_wall / ray_seq:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
