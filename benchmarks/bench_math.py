"""The math reward against TRL's accuracy_reward (math-verify) on the same completions.

    .venv/bin/python benchmarks/bench_math.py [--plain N] [--latex N] [--batch B]

Plain numbers (`<answer>42</answer>` and gsm8k-style text ending in a number): throughput of
both and how often each agrees with the known truth. LaTeX in \\boxed{}: how often our verdict
equals math-verify's (TRL's accuracy_reward) where it gives one, and throughput with 1 and 2
worker processes (GRPO_REWARD_WORKERS) against TRL's, all measured in this run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

NAMES = ("Ana", "Ben", "Chen", "Dara")


GROUP = 8  # completions per prompt, as GRPO samples them (num_generations)


def plain_items(n: int, seed: int = 0) -> list[tuple[str, str, float]]:
    """(completion, gold, truth) in groups of GROUP per gold: half right, half wrong, half tagged, half prose."""
    rng = random.Random(seed)
    items = []
    for i in range(n):
        if i % GROUP == 0:
            gold = rng.randint(0, 5000)
        right = i % 2 == 0
        value = gold if right else gold + rng.choice([-3, -1, 1, 2, 10])
        if i % 4 < 2:
            completion = f"{rng.choice(NAMES)} adds them up.\n<answer>{value}</answer>"
        else:
            a = rng.randint(0, value) if value > 0 else 0
            completion = (
                f"{rng.choice(NAMES)} had {a} apples and got {value - a} more.\n"
                f"So {a} + {value - a} = {value}.\nThe answer is {value}"
            )
        items.append((completion, str(gold), 1.0 if right else 0.0))
    return items


def latex_case(rng: random.Random) -> tuple[str, list[str], list[str]]:
    """(gold, equivalent forms, different values) in the shapes of competition-math answers, freshly drawn."""
    a, b, c = rng.randint(2, 30), rng.randint(2, 30), rng.randint(2, 9)
    while b == a:
        b = rng.randint(2, 30)
    k, m = rng.randint(2, 9), rng.choice([2, 3, 5, 6, 7, 10, 11])
    kind = rng.randrange(8)
    if kind == 0:
        return f"\\frac{{\\sqrt{{{m}}}}}{{{c}}}", [f"\\sqrt{{{m}}}/{c}", f"\\frac{{1}}{{{c}}}\\sqrt{{{m}}}"], [f"\\sqrt{{{m}}}", f"\\frac{{\\sqrt{{{m + 1}}}}}{{{c}}}"]
    if kind == 1:
        return f"{k}\\sqrt{{{m}}}", [f"\\sqrt{{{k * k * m}}}", f"{k} \\sqrt {m}"], [f"\\sqrt{{{k * m}}}", f"{k + 1}\\sqrt{{{m}}}"]
    if kind == 2:
        lo, hi = sorted((a, b))
        return f"({lo}, {hi}]", [f"({lo},{hi}]"], [f"[{lo}, {hi}]", f"({lo}, {hi})"]
    if kind == 3:
        items = rng.sample(range(-20, 40), 3)
        shuffled = items[::-1]
        return "\\{" + ", ".join(map(str, items)) + "\\}", ["\\{" + ",".join(map(str, shuffled)) + "\\}"], ["\\{" + ", ".join(map(str, items[:2])) + "\\}"]
    if kind == 4:
        return f"x^2 + {2 * a}x + {a * a}", [f"(x+{a})^2", f"(x + {a})^{{2}}"], [f"(x-{a})^2", f"x^2 + {a * a}"]
    if kind == 5:
        return f"\\frac{{{a}\\pi}}{{{b}}}", [f"{a}\\pi/{b}", f"\\frac{{{a}}}{{{b}}}\\pi"], [f"\\frac{{{b}\\pi}}{{{a}}}", f"{a}\\pi"]
    if kind == 6:
        return f"\\begin{{pmatrix}} {a} \\\\ {b} \\end{{pmatrix}}", [f"\\begin{{pmatrix}}{a}\\\\{b}\\end{{pmatrix}}"], [f"\\begin{{pmatrix}} {b} \\\\ {a} \\end{{pmatrix}}"]
    return f"{a} + {b}i", [f"{b}i + {a}"], [f"{a} - {b}i", f"{b} + {a}i"]


def latex_items(n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    items = []
    for i in range(n):
        if i % GROUP == 0:
            gold, same, different = latex_case(rng)
        answer = rng.choice(same if i % 2 == 0 else different)
        items.append((f"We simplify step by step.\nThe final answer is $\\boxed{{{answer}}}$.", gold))
    return items


def trl_scores(items, batch: int, delimit: bool = False) -> tuple[list, float]:
    """TRL's accuracy_reward; ``delimit`` writes the gold as ``$...$`` LaTeX, the form math-verify expects."""
    import logging

    from trl.rewards import accuracy_reward

    logging.getLogger("math_verify").setLevel(logging.ERROR)
    scores = []
    start = time.perf_counter()
    for i in range(0, len(items), batch):
        chunk = items[i : i + batch]
        scores += accuracy_reward(
            completions=[[{"role": "assistant", "content": c}] for c, *_ in chunk], solution=[f"${g}$" if delimit else g for _, g, *_ in chunk]
        )
    return scores, time.perf_counter() - start


def our_scores(items, batch: int, warm=None) -> tuple[list, float]:
    """Our reward through the TRL adapter, after one untimed call on ``warm`` items (starts the workers)."""
    from grpo_core import load_rewards

    (reward,) = load_rewards(["math"])
    warm = warm or items[:batch]
    reward.score(completions=[c for c, *_ in warm], answer=[g for _, g, *_ in warm])
    scores = []
    start = time.perf_counter()
    for i in range(0, len(items), batch):
        chunk = items[i : i + batch]
        scores += reward.score(completions=[c for c, *_ in chunk], answer=[g for _, g, *_ in chunk])
    return scores, time.perf_counter() - start


def child(args) -> None:
    """Score the LaTeX set with this process's worker count; print JSON."""
    # Warm on other items than the timed ones, so per-worker caches do not flatter either run.
    scores, seconds = our_scores(latex_items(args.latex), args.batch, warm=latex_items(args.batch, seed=99))
    print(json.dumps({"scores": scores, "seconds": seconds}))


def agreement(scores, truth) -> float:
    return sum(1 for s, t in zip(scores, truth) if s == t) / len(truth)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plain", type=int, default=4000, help="plain-number completions for our reward")
    parser.add_argument("--trl-plain", type=int, default=400, help="of those, how many TRL scores (it is slow)")
    parser.add_argument("--latex", type=int, default=300, help="LaTeX \\boxed{} completions")
    parser.add_argument("--batch", type=int, default=64, help="completions per reward call, as in a GRPO step")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="a few completions of each kind: checks the benchmark runs")
    args = parser.parse_args()
    if args.quick:
        args.plain, args.trl_plain, args.latex, args.batch = 40, 8, 8, 8
    if args.child:
        child(args)
        return

    rows = []
    plain = plain_items(args.plain)
    ours, ours_s = our_scores(plain, args.batch)
    trl_subset = plain[: args.trl_plain]
    trl, trl_s = trl_scores(trl_subset, args.batch)
    ours_rate, trl_rate = len(plain) / ours_s, len(trl_subset) / trl_s
    truth = [t for *_, t in plain]
    rows.append(("plain numbers", "ours (in-process)", len(plain), ours_rate, agreement(ours, truth), "truth"))
    rows.append(("plain numbers", "TRL accuracy_reward", len(trl_subset), trl_rate, agreement(trl, truth[: len(trl)]), "truth"))
    for kind, start in (("<answer>N</answer>", 0), ("gsm8k-style prose", 2)):
        picks = [i for i in range(len(trl_subset)) if i % 4 in (start, start + 1)]
        rows.append((f"  of which {kind}", "ours / TRL agree with truth", len(picks),
                     None, agreement([ours[i] for i in picks], [truth[i] for i in picks]),
                     f"TRL {agreement([trl[i] for i in picks], [truth[i] for i in picks]):.0%}"))

    # The headline ratio: <answer>N</answer> for us, the same answers written in LaTeX (\boxed{N}) for TRL.
    tagged = [item for i, item in enumerate(plain) if i % 4 < 2]
    ours_tagged, ours_tagged_s = our_scores(tagged, args.batch)
    as_latex = [(c.replace("<answer>", "The final answer is $\\boxed{").replace("</answer>", "}$."), g, t)
                for c, g, t in tagged[: args.trl_plain]]
    trl_tagged, trl_tagged_s = trl_scores(as_latex, args.batch, delimit=True)
    tagged_ratio = (len(tagged) / ours_tagged_s) / (len(as_latex) / trl_tagged_s)

    latex = latex_items(args.latex)
    trl_latex, trl_latex_s = trl_scores(latex, args.batch, delimit=True)
    runs = {}
    for workers in (1, 2):
        env = dict(os.environ, GRPO_REWARD_WORKERS=str(workers))
        out = subprocess.run(
            [sys.executable, __file__, "--child", "--latex", str(args.latex), "--batch", str(args.batch)],
            env=env, capture_output=True, text=True, check=True,
        ).stdout
        runs[workers] = json.loads(out.strip().splitlines()[-1])
    compared = [i for i, s in enumerate(trl_latex) if s is not None]
    trl_latex_rate = len(latex) / trl_latex_s
    for workers, run in runs.items():
        same = sum(1 for i in compared if run["scores"][i] == trl_latex[i]) / len(compared)
        rows.append(("LaTeX \\boxed{}", f"ours, {workers} worker{'s' * (workers > 1)}", len(latex),
                     len(latex) / run["seconds"], same, "math-verify"))
    rows.append(("LaTeX \\boxed{}", "TRL accuracy_reward", len(latex), trl_latex_rate, 1.0, "math-verify"))

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{os.cpu_count()} CPUs, load average {load:.1f} at the end of the run (other work skews the worker figures)")
    print(f"{'set':<28} {'scorer':<30} {'items':>6} {'items/s':>10} {'agree':>7}  with")
    for name, scorer, n, rate, agree, against in rows:
        rate_text = f"{rate:10.0f}" if rate is not None else f"{'':>10}"
        print(f"{name:<28} {scorer:<30} {n:>6} {rate_text} {agree:>7.1%}  {against}")
    print()
    print(f"<answer>N</answer> (ours) vs the same answers in LaTeX \\boxed{{N}} (TRL): {tagged_ratio:.0f}x "
          f"(target >= 150x, aim 200x); agreement with truth: ours {agreement(ours_tagged, [t for *_, t in tagged]):.1%}, "
          f"TRL {agreement(trl_tagged, [t for *_, t in as_latex]):.1%}")
    print(f"plain numbers, same text for both: ours / TRL throughput = {ours_rate / trl_rate:.0f}x")
    for workers, run in runs.items():
        print(f"LaTeX: ours with {workers} worker(s) / TRL throughput = {len(latex) / run['seconds'] / trl_latex_rate:.2f}x")
    print(f"LaTeX: 2 workers / 1 worker = {runs[1]['seconds'] / runs[2]['seconds']:.2f}x")
    disagreements = [
        (latex[i][0].split("boxed{", 1)[1][:-3], latex[i][1], runs[1]["scores"][i], trl_latex[i])
        for i in compared if runs[1]["scores"][i] != trl_latex[i]
    ]
    for answer, gold, our, theirs in sorted(set(disagreements))[:10]:
        print(f"  differs: answer {answer!r} gold {gold!r}: ours {our}, math-verify {theirs}")


if __name__ == "__main__":
    main()
