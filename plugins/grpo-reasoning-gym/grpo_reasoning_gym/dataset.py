"""The ``reasoning-gym`` dataset: rows generated offline from reasoning-gym's task generators.

Every row carries what scoring needs, so the reward works in worker processes, after a resume
and from a plain TRL script: ``answer`` (the gold answer text), ``task`` and ``entry`` (the
generator's whole entry as JSON, which the task's checker gets back intact).
"""

from __future__ import annotations

import random
import zlib

from grpo_core import UsageError

from grpo_reasoning_gym import tasks as task_registry
from grpo_reasoning_gym.curriculum import RowMaker, attach
from grpo_reasoning_gym.entries import dump_entry

SYSTEM_PROMPT = (
    "Think the problem through, then give only the final answer inside <answer></answer>, "
    "for example <answer>42</answer>."
)


def task_seed(seed: int, task: str) -> int:
    """A stable seed per task (``hash()`` differs between processes)."""
    return zlib.crc32(f"{seed}:{task}".encode())


def counts(weights: dict[str, float], size: int) -> dict[str, int]:
    """Rows per task, in proportion to the weights (largest remainder, so they add up to ``size``)."""
    total = sum(weights.values())
    exact = {task: size * weight / total for task, weight in weights.items()}
    result = {task: int(value) for task, value in exact.items()}
    left = size - sum(result.values())
    for task in sorted(exact, key=lambda t: (result[t] - exact[t], t))[:left]:
        result[task] += 1
    return result


def prompt(question: str, system_prompt: str | None, chat: bool, shots: list[tuple[str, str]] = ()):
    """Chat messages (system, solved examples as earlier turns, user), or one plain text in that order."""
    solved = [(q, f"<answer>{a}</answer>") for q, a in shots]
    if chat:
        turns = [[{"role": "user", "content": q}, {"role": "assistant", "content": a}] for q, a in solved]
        return ([{"role": "system", "content": system_prompt}] if system_prompt else []) + sum(turns, []) + [
            {"role": "user", "content": question}
        ]
    return "\n\n".join([system_prompt] * bool(system_prompt) + [f"{q}\n{a}" for q, a in solved] + [question])


def solved_examples(task: str, settings: dict, seed: int, count: int) -> list[tuple[str, str]]:
    """``count + 1`` distinct (question, gold answer) pairs of ``task``, from a seed of their own.

    A row shows the first ``count`` whose question is not its own (see :func:`make_row`), so no
    prompt holds its own answer. Empty when ``count`` is 0.
    """
    if not count:
        return []
    generator = make_task_generator(task, settings, task_seed(seed, f"{task}:examples"), 4 * count + 16)
    found: dict[str, str] = {}
    for index in range(len(generator)):
        entry = generator[index]
        if entry.get("answer") is not None:
            found.setdefault(str(entry["question"]), str(entry["answer"]))
        if len(found) > count:
            return list(found.items())
    if not found:
        raise UsageError(f"few_shot={count}: task {task} has no gold answers to show (its checker verifies "
                         "solutions itself); drop few_shot or the task")
    raise UsageError(f"few_shot={count}: task {task} gave only {len(found)} distinct examples; use fewer")


def generate_rows(tasks="chain_sum", size=1000, seed=0, settings=None, system_prompt=SYSTEM_PROMPT, chat=True,
                  levels: dict[str, int] | None = None, few_shot=0) -> list[dict]:
    """The rows as dicts, in a seeded mixed order; the same arguments give the same rows.

    ``levels`` (task -> curriculum level) generates those tasks at that difficulty instead of
    ``settings``. ``few_shot`` solved examples of the row's own task (see :func:`solved_examples`)
    go before each question.
    """
    if few_shot is None or few_shot < 0:
        raise UsageError(f"the reasoning-gym dataset needs few_shot of 0 or more, got {few_shot!r}")
    if size is None or size < 1:
        raise UsageError(f"the reasoning-gym dataset needs size of 1 or more, got {size!r}")
    weights = task_registry.parse_tasks(tasks)
    per_task = task_registry.parse_settings(settings, list(weights))
    rows = []
    for task, count in counts(weights, size).items():
        if not count:
            continue
        generator = make_task_generator(task, per_task[task], seed, count, (levels or {}).get(task))
        examples = solved_examples(task, per_task[task], seed, few_shot)
        for index in range(count):
            rows.append(make_row(task, index, generator[index], system_prompt, chat, examples))
    random.Random(f"reasoning-gym:{seed}").shuffle(rows)
    return rows


def make_task_generator(task: str, settings: dict, seed: int, size: int, level: int | None = None):
    """reasoning-gym's generator for one task, from settings or from a curriculum level."""
    if level is not None:
        config = task_registry.config_at_level(task, level, settings, task_seed(seed, task), size)
    else:
        config = task_registry.make_config(task, settings, task_seed(seed, task), size)
    return task_registry.make_generator(task, config, task_seed(seed, task), size)


def make_row(task: str, index: int, entry: dict, system_prompt: str | None, chat: bool,
             examples: list[tuple[str, str]] = ()) -> dict:
    """One row; ``examples`` from :func:`solved_examples` (all but one are shown, never the row's own question)."""
    answer, question = entry.get("answer"), str(entry["question"])
    shots = [pair for pair in examples if pair[0] != question][:max(len(examples) - 1, 0)]
    return {
        "prompt": prompt(question, system_prompt, chat, shots),
        "answer": "" if answer is None else str(answer),
        "task": task,
        "entry": dump_entry(entry),
        "item": index,
    }


def load(tasks="chain_sum", size=1000, seed=0, settings=None, system_prompt=SYSTEM_PROMPT, chat=True,
         curriculum=False, threshold=0.7, window=64, few_shot=0):
    """A ``datasets.Dataset`` of generated rows (see :func:`generate_rows`).

    With ``curriculum``, rows are made again at the task's current level when they are read, and
    the level rises once the rolling accuracy on the task passes ``threshold`` (see curriculum.py).
    """
    from datasets import Dataset

    levels = {task: 0 for task in task_registry.parse_tasks(tasks)} if curriculum else None
    rows = generate_rows(tasks, size, seed, settings, system_prompt, chat, levels, few_shot)
    dataset = Dataset.from_list(rows)
    if curriculum:
        dataset = attach(dataset, RowMaker(make_task_generator, make_row, solved_examples), tasks=tasks, seed=seed, settings=settings, system_prompt=system_prompt, chat=chat,
                         few_shot=few_shot,
                         threshold=threshold, window=window)
    return dataset
