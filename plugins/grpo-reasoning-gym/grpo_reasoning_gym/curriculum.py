"""Curricula: a task's difficulty rises when the policy's rolling accuracy on it passes a threshold.

The levels are reasoning-gym's own curriculum definitions (``reasoning_gym.coaching``). Rows are
made again at the task's current level each time the trainer reads them, the level is logged as
``curriculum/<task>/level``, and it is stored in every checkpoint's trainer state so ``--resume``
continues at the same level.
"""

from __future__ import annotations

from collections import deque
from typing import Callable, NamedTuple
from functools import lru_cache

from grpo_core import UsageError

from grpo_reasoning_gym import tasks as task_registry

_ACTIVE: list = []  # curricula of datasets loaded in this process, fed by observe()


def max_level(task: str) -> int:
    from reasoning_gym.factory import create_curriculum

    return max((len(attribute.levels) - 1 for attribute in create_curriculum(task).attributes.values()), default=0)


class Curriculum:
    """Per-task levels and rolling accuracies; ``record`` raises a level once the window is full and above threshold."""

    def __init__(self, tasks: list[str], threshold: float = 0.7, window: int = 64) -> None:
        if not 0 < threshold <= 1:
            raise UsageError(f"curriculum threshold must be above 0 and at most 1, got {threshold!r}")
        if window < 1:
            raise UsageError(f"curriculum window must be 1 or more, got {window!r}")
        self.threshold = threshold
        self.window = window
        self.levels = {task: 0 for task in tasks}
        self.top = {task: max_level(task) for task in tasks}
        self.scores = {task: deque(maxlen=window) for task in tasks}

    def record(self, task: str, score: float | None) -> bool:
        """Count one scored completion; True when this raised the task's level."""
        if task not in self.levels or score is None:
            return False
        recent = self.scores[task]
        recent.append(float(score))
        if len(recent) < self.window or sum(recent) / len(recent) < self.threshold:
            return False
        if self.levels[task] >= self.top[task]:
            return False
        self.levels[task] += 1
        recent.clear()  # the new level earns its own accuracy
        return True

    def accuracy(self, task: str) -> float | None:
        recent = self.scores[task]
        return sum(recent) / len(recent) if recent else None

    def restore(self, levels: dict) -> None:
        for task, level in levels.items():
            if task in self.levels:
                self.levels[task] = max(0, min(int(level), self.top[task]))


class RowMaker(NamedTuple):
    """How the dataset makes rows, handed in so the curriculum makes them the same way at higher levels."""

    generator: Callable  # (task, settings, seed, size, level) -> reasoning-gym's generator
    row: Callable  # (task, index, entry, system_prompt, chat, examples) -> one row
    examples: Callable  # (task, settings, seed, few_shot) -> solved examples


class LevelledRows:
    """A ``datasets`` transform: each row read is made again at its task's current level."""

    def __init__(self, curriculum: Curriculum, seed: int, settings: dict[str, dict], system_prompt, chat, size: int,
                 few_shot: int = 0, rows: RowMaker | None = None) -> None:
        self.curriculum = curriculum
        self.rows = rows
        self.size = size
        self.seed, self.settings, self.system_prompt, self.chat = seed, settings, system_prompt, chat
        self.few_shot = few_shot

    @lru_cache(maxsize=64)
    def examples(self, task: str) -> list:
        """The rows' solved examples: the ones of level 0, the same at every level."""
        return self.rows.examples(task, self.settings.get(task, {}), self.seed, self.few_shot)

    @lru_cache(maxsize=64)
    def generator(self, task: str, level: int):
        return self.rows.generator(task, self.settings.get(task, {}), self.seed + 1000 * level, self.size, level)

    def __call__(self, batch: dict) -> dict:
        batch = {key: list(values) for key, values in batch.items()}
        for i, (task, item) in enumerate(zip(batch["task"], batch["item"])):
            level = self.curriculum.levels.get(task, 0)
            if level == 0:
                continue
            row = self.rows.row(task, item, self.generator(task, level)[item], self.system_prompt, self.chat,
                           self.examples(task))
            for key in ("prompt", "answer", "entry"):
                if key in batch:
                    batch[key][i] = row[key]
        return batch


def attach(dataset, rows: RowMaker, tasks, seed, settings, system_prompt, chat, threshold, window, few_shot=0):
    """The dataset with a :class:`LevelledRows` transform; the curriculum is found again with :func:`curriculum_of`."""
    weights = task_registry.parse_tasks(tasks)
    missing = [task for task in weights if not _has_curriculum(task)]
    if missing:
        raise UsageError(f"task(s) {', '.join(missing)} have no reasoning-gym curriculum; drop curriculum=true or them")
    curriculum = Curriculum(list(weights), threshold, window)
    per_task = task_registry.parse_settings(settings, list(weights))
    dataset.set_transform(LevelledRows(curriculum, seed, per_task, system_prompt, chat, len(dataset), few_shot,
                                       rows))
    _ACTIVE.append(curriculum)
    return dataset


def _has_curriculum(task: str) -> bool:
    from reasoning_gym.factory import has_curriculum

    return has_curriculum(task)


def curriculum_of(dataset) -> Curriculum | None:
    transform = (getattr(dataset, "format", None) or {}).get("format_kwargs", {}).get("transform")
    return getattr(transform, "curriculum", None)


def observe(columns: dict, scores: list, params: dict | None = None) -> None:
    """Feed scored completions (``columns["task"]`` per completion) to every active curriculum."""
    for task, score in zip(columns.get("task") or [], scores):
        for curriculum in _ACTIVE:
            curriculum.record(task, score)


def callback(dataset):
    """The trainer callback that logs and checkpoints the dataset's curriculum levels (None without one)."""
    curriculum = curriculum_of(dataset)
    if curriculum is None:
        return None
    from transformers import TrainerCallback
    from transformers.trainer_callback import ExportableState

    class CurriculumCallback(TrainerCallback, ExportableState):
        """Logs ``curriculum/<task>/level`` and stores the levels with each checkpoint."""

        def __init__(self) -> None:
            self.curriculum = curriculum

        def state(self) -> dict:
            return {"args": {}, "attributes": {"levels": dict(self.curriculum.levels)}}

        def on_train_begin(self, args, state, control, **kwargs):
            stored = (state.stateful_callbacks or {}).get(type(self).__name__)
            if isinstance(stored, list):
                stored = stored[0] if stored else None
            if stored:  # resuming: continue at the checkpoint's levels
                self.curriculum.restore(stored.get("attributes", {}).get("levels", {}))

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs is not None:
                for task, level in self.curriculum.levels.items():
                    logs[f"curriculum/{task}/level"] = float(level)

    return CurriculumCallback()


def callbacks(dataset, params: dict) -> list:
    """``DatasetSpec.callbacks``: the curriculum's trainer callback, when the dataset has a curriculum."""
    found = callback(dataset)
    return [found] if found is not None else []
