"""The live exploit audit's shape test (`grpo_core.training.health.degenerate_family`) in both directions.

    .venv/bin/python benchmarks/bench_health_audit.py [--per-task N] [--quick]

Attacks: for each question of reasoning-gym's tasks (and the arithmetic dataset's), the generic degenerate
completions the checks try on every reward (empty, the prompt copied back, padding, repetition, number sprays,
blank-rendering characters, a repeated sentence). Right answers: the same questions answered with their gold
answer written five ways (bare, in the answer tag, after a line of reasoning, as `The answer is X.`, and after
restating the question). Prints how many attacks the audit calls degenerate and how many right answers it does,
by family, with examples of the right answers it flags.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TASKS = ("aiw", "basic_arithmetic", "chain_sum", "count_primes", "decimal_arithmetic", "fraction_simplification",
         "gcd", "gsm_symbolic", "leg_counting", "letter_counting", "number_sequence", "number_sorting", "products",
         "simple_equations", "spell_backward", "word_sorting", "caesar_cipher", "base_conversion")


def questions(per_task: int) -> list[tuple[str, str, str]]:
    """(source, question, gold answer) for each generated item."""
    import reasoning_gym

    from grpo_core import load_dataset

    out = []
    for task in TASKS:
        try:
            entries = reasoning_gym.create_dataset(task, size=per_task, seed=11)
        except Exception as error:  # a task this reasoning-gym version lacks
            print(f"(skipped {task}: {error})")
            continue
        out += [(task, entry["question"], str(entry["answer"])) for entry in entries]
    rows = load_dataset("arithmetic", params={"size": per_task})
    out += [("arithmetic", row["prompt"][-1]["content"], str(row["answer"])) for row in rows]
    return out


def attacks(question: str, gold: str) -> list[tuple[str, str]]:
    from grpo_core.testing import (blank_texts, copied_prompt, generic_degenerate, number_sprays, padding_to,
                                   repeated)

    return [*generic_degenerate(question, size=300), *padding_to(200), *blank_texts(200), *number_sprays()[:2],
            *copied_prompt(question), *repeated(f"The answer is {gold}. ", size=300)[:1]]


def right_answers(question: str, gold: str) -> list[tuple[str, str]]:
    return [
        ("bare", gold),
        ("in the answer tag", f"<answer>{gold}</answer>"),
        ("after a line of reasoning", f"Let me work it out step by step from what is given.\n<answer>{gold}</answer>"),
        ("as a sentence", f"Putting it all together, the answer is {gold}."),
        ("after restating the question", f"{question.strip()}\nSo the answer is {gold}."),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-task", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="2 items per task: checks the benchmark runs")
    args = parser.parse_args()
    from grpo_core.training.health import degenerate_family

    items = questions(2 if args.quick else args.per_task)
    caught, total, by_family = 0, 0, Counter()
    flagged, right, by_form, examples = 0, 0, Counter(), []
    for task, question, gold in items:
        for label, text in attacks(question, gold):
            family = degenerate_family(text, question)
            total += 1
            caught += family is not None
            by_family[family or "not caught"] += 1
        for form, text in right_answers(question, gold):
            family = degenerate_family(text, question)
            right += 1
            if family is not None:
                flagged += 1
                by_form[f"{form} -> {family}"] += 1
                if len(examples) < 6:
                    examples.append(f"  {task}: {text[:100]!r} -> {family}")
    print(f"questions: {len(items)} ({len({t for t, _, _ in items})} sources)")
    print(f"attacks called degenerate: {caught} of {total} ({caught / total:.1%})")
    for family, count in by_family.most_common():
        print(f"  {family}: {count}")
    print(f"right answers called degenerate: {flagged} of {right} ({flagged / right:.1%})")
    for form, count in by_form.most_common():
        print(f"  {form}: {count}")
    print("\n".join(examples))


if __name__ == "__main__":
    main()
