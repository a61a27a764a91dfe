"""Which reasoning-gym tasks pay an answer that does not do the task: constants, the copied question, padding.

    .venv/bin/python benchmarks/scan_reasoning_gym.py [--items N] [--seed S] [--graded] [--show TASK,...]

For every task, N generated items (seed S) are answered with each constant of ``ATTACKS`` and with the
item's question copied, and with the gold answer followed by extra text (``PADDING``). An attack counts
against a task when it scores 1.0 (strict) on an item whose gold answer it differs from; the gold answer
itself is scored too, to count right answers refused. ``--graded`` scores with ``strict=false`` and
flags any padded gold or constant that reaches the gold's own score. The other direction, right answers refused:
besides the gold itself, each item is answered with right answers written another way (``spellings``: a closing
period, ``$42$``, ``42 legs`` where the question asks how many legs, another order of knights_knaves' clauses,
``A -> B`` for ``A → B``, spaced moves, ``\frac{a}{b}`` for ``a/b``, other letter case where the checker ignores
it), and how many of them pay 1.0 is printed per kind. ``--show`` prints, for the tasks named, the
mean score of every attack over the items, flagged or not.
"""

from __future__ import annotations

import argparse
import collections
import re
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "plugins", "grpo-reasoning-gym"))

from grpo_reasoning_gym import reasoning_gym_rewards  # noqa: E402
from grpo_reasoning_gym.degenerate import ATTACKS, PADDING, attack_answers  # noqa: E402
from grpo_reasoning_gym.dataset import generate_rows  # noqa: E402
from grpo_reasoning_gym.reward import NUMBER_TASKS  # noqa: E402

# The tasks the plugin's own rules judge (grpo_reasoning_gym.rules), named here so the scan runs on older versions.
JUDGED_BY_RULES = {"game_of_life_halting", "letter_jumble", "spell_backward", "fraction_simplification",
                   "knights_knaves", "kakurasu", "quantum_lock", "sokoban", "survo", "time_intervals"}
from grpo_reasoning_gym.tasks import task_names  # noqa: E402


def spellings(task: str, gold: str, question: str) -> list[tuple[str, str]]:
    """Right answers written another way than the gold answer, as (kind, answer)."""
    found = [("spaces around", f"  {gold}  ")]
    if task in NUMBER_TASKS or task in JUDGED_BY_RULES:  # where the plugin's own rule decides
        found.append(("closing period", gold + "."))
    if task in NUMBER_TASKS:
        found.append(("$number$", f"${gold}$"))
        if counted := re.search(r"how many ([a-z]+)", question.lower()):
            found.append(("number + counted noun", f"{gold} {counted.group(1)}"))
    if task == "knights_knaves":
        parts = re.split(r",\s*and\s+", gold.rstrip("."))
        found += [("clauses reordered", ", and ".join(reversed(parts)) + "."), ("no comma", " and ".join(parts)),
                  ("lower case", gold.lower()), ("no period", gold.rstrip("."))]
    if task == "quantum_lock":
        letters = re.findall(r"[A-C]", gold)
        found += [("->", " -> ".join(letters)), ("commas", ", ".join(letters)), ("joined", "".join(letters)),
                  ("lower case", gold.lower())]
    if task == "sokoban":
        found += [("spaced moves", " ".join(gold)), ("comma moves", ",".join(gold))]
    if task in ("kakurasu", "survo"):
        found += [("double spaces", gold.replace(" ", "  ")), ("spaces before newlines", gold.replace("\n", " \n"))]
    if task == "kakurasu":
        found.append(("commas", gold.replace(" ", ",")))
    if task == "fraction_simplification":
        a, b = re.search(r"(\d+)\D+(\d+)", gold).groups()
        found += [("a/b", f"{a}/{b}"), ("a / b", f"{a} / {b}"), ("\\frac", f"\\frac{{{a}}}{{{b}}}"),
                  ("$\\frac$", f"$\\frac{{{a}}}{{{b}}}$"), ("\\dfrac", f"\\dfrac{{{a}}}{{{b}}}")]
    if task in ("letter_jumble", "spell_backward", "game_of_life_halting"):
        found += [("upper case", gold.upper()), ("lower case", gold.lower())]
    if task == "letter_jumble":
        found.append(("double spaces", gold.replace(" ", "  ")))
    if task == "time_intervals":
        found.append(("no space after comma", gold.replace(", ", ",")))
    return found


def scan(items: int, seed: int, strict: bool, show=()) -> tuple[dict, dict, int, int]:
    """Per task: attack label -> the highest score it got on an item whose gold differs; and the refused golds."""
    flagged: dict[str, dict[str, float]] = {}
    right: collections.Counter = collections.Counter()  # (task, kind) -> [paid, asked]
    asked: collections.Counter = collections.Counter()
    shown: dict[str, dict[str, list]] = {}
    refused: dict[str, int] = {}
    golds = attacks = 0
    for task in task_names():
        for row in generate_rows(task, items, seed=seed, system_prompt=None, chat=False):
            gold = row["answer"].strip()
            if not gold:
                continue
            pairs = attack_answers(row)
            others = spellings(task, gold, row["prompt"])
            texts = [gold] + [answer for _, answer in pairs] + [answer for _, answer in others]
            n = len(texts)
            scores = reasoning_gym_rewards([f"<answer>{t}</answer>" for t in texts], [row["answer"]] * n, [task] * n,
                                           [row["entry"]] * n, strict=strict)
            scores = [getattr(s, "score", s) or 0.0 for s in scores]
            golds += 1
            attacks += len(pairs)
            if scores[0] < 1.0:
                refused[task] = refused.get(task, 0) + 1
            for (kind, _), score in zip(others, scores[1 + len(pairs):]):
                asked[task, kind] += 1
                right[task, kind] += score == 1.0
            for (label, _), score in zip(pairs, scores[1:]):
                if task in show:
                    shown.setdefault(task, {}).setdefault(label, []).append(score)
                if score >= scores[0] and score > 0:
                    flagged.setdefault(task, {})[label] = max(score, flagged.get(task, {}).get(label, 0.0))
    for task, labels in sorted(shown.items()):
        print(f"  {task:28s} " + ", ".join(f"{label}={sum(s) / len(s):.2f}" for label, s in sorted(labels.items())))
    print(f"right answers written another way paid 1.0: {sum(right.values())} of {sum(asked.values())}")
    for task, kind in sorted(asked):
        if right[task, kind] < asked[task, kind]:
            print(f"  {task:28s} {kind:24s} {right[task, kind]} of {asked[task, kind]}")
    return flagged, refused, golds, attacks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--graded", action="store_true")
    parser.add_argument("--show", default="", help="comma-separated tasks whose every attack score is printed")
    args = parser.parse_args()
    start = time.perf_counter()
    show = set(filter(None, args.show.split(",")))
    flagged, refused, golds, attacks = scan(args.items, args.seed, not args.graded, show)
    print(f"{len(task_names())} tasks, {golds} items with a gold answer, {attacks} attacks "
          f"({', '.join(label for label, _ in ATTACKS)}, copied question, {len(PADDING)} paddings); "
          f"{time.perf_counter() - start:.0f} s")
    print(f"tasks paying an attack as much as the gold: {len(flagged)}")
    for task, labels in sorted(flagged.items()):
        print(f"  {task:28s} " + ", ".join(f"{label}={score:g}" for label, score in sorted(labels.items())))
    print(f"right answers refused: {sum(refused.values())} of {golds}"
          + "".join(f"\n  {task}: {count}" for task, count in sorted(refused.items())))


if __name__ == "__main__":
    main()
