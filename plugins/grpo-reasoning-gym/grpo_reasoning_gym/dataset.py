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


def prompt(question: str, system_prompt: str | None, chat: bool):
    """Chat messages (system, user), or one plain text with the system prompt first."""
    if chat:
        return ([{"role": "system", "content": system_prompt}] if system_prompt else []) + [
            {"role": "user", "content": question}
        ]
    return f"{system_prompt}\n\n{question}" if system_prompt else question


def generate_rows(tasks="chain_sum", size=1000, seed=0, settings=None, system_prompt=SYSTEM_PROMPT, chat=True,
                  levels: dict[str, int] | None = None) -> list[dict]:
    """The rows as dicts, in a seeded mixed order; the same arguments give the same rows.

    ``levels`` (task -> curriculum level) generates those tasks at that difficulty instead of
    ``settings``.
    """
    if size is None or size < 1:
        raise UsageError(f"the reasoning-gym dataset needs size of 1 or more, got {size!r}")
    weights = task_registry.parse_tasks(tasks)
    per_task = task_registry.parse_settings(settings, list(weights))
    rows = []
    for task, count in counts(weights, size).items():
        if not count:
            continue
        generator = make_task_generator(task, per_task[task], seed, count, (levels or {}).get(task))
        for index in range(count):
            rows.append(make_row(task, index, generator[index], system_prompt, chat))
    random.Random(f"reasoning-gym:{seed}").shuffle(rows)
    return rows


def make_task_generator(task: str, settings: dict, seed: int, size: int, level: int | None = None):
    """reasoning-gym's generator for one task, from settings or from a curriculum level."""
    if level is not None:
        from grpo_reasoning_gym.curriculum import config_at_level

        config = config_at_level(task, level, settings, task_seed(seed, task), size)
    else:
        config = task_registry.make_config(task, settings, task_seed(seed, task), size)
    return task_registry.make_generator(task, config, task_seed(seed, task), size)


def make_row(task: str, index: int, entry: dict, system_prompt: str | None, chat: bool) -> dict:
    answer = entry.get("answer")
    return {
        "prompt": prompt(str(entry["question"]), system_prompt, chat),
        "answer": "" if answer is None else str(answer),
        "task": task,
        "entry": dump_entry(entry),
        "item": index,
    }


def load(tasks="chain_sum", size=1000, seed=0, settings=None, system_prompt=SYSTEM_PROMPT, chat=True,
         curriculum=False, threshold=0.7, window=64):
    """A ``datasets.Dataset`` of generated rows (see :func:`generate_rows`).

    With ``curriculum``, rows are made again at the task's current level when they are read, and
    the level rises once the rolling accuracy on the task passes ``threshold`` (see curriculum.py).
    """
    from datasets import Dataset

    levels = {task: 0 for task in task_registry.parse_tasks(tasks)} if curriculum else None
    rows = generate_rows(tasks, size, seed, settings, system_prompt, chat, levels)
    dataset = Dataset.from_list(rows)
    if curriculum:
        from grpo_reasoning_gym.curriculum import attach

        dataset = attach(dataset, tasks=tasks, seed=seed, settings=settings, system_prompt=system_prompt, chat=chat,
                         threshold=threshold, window=window)
    return dataset
