"""What grpo-core relies on inside TRL's GRPOTrainer beyond its documented API, each named with why, in one place.

TRL has no public hook for a generation batch's gathered per-reward scores, nor for its last batch of completions
without turning on ``log_completions`` (which prints tables and writes parquet files into the output folder), so
these two are read here and nowhere else. ``missing()`` checks an installed TRL still has each; tests/test_trl.py
fails, naming the attribute, when one goes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from grpo_core.errors import UsageError

# Each reliance: the attribute, why grpo-core needs it, and source text of GRPOTrainer that shows it is still used so.
RELIED_ON = {
    "GRPOTrainer.reward_weights": (
        "the weight schedules set this tensor before each step; TRL must read it again for every batch's weighted sum",
        "self.reward_weights.to(",
    ),
    "GRPOTrainer._calculate_rewards": (
        "adaptive weights and the health signals observe each reward's scores of a generation batch, gathered over "
        "all processes, in the (completions x rewards) table it returns, and a control run replaces them",
        "rewards_per_func = self._calculate_rewards(",
    ),
    "GRPOTrainer._logs": (
        "completions.jsonl samples the last generation batch's prompts, completions and per-reward scores it keeps "
        "(keys prompt, completion, rewards)",
        'self._logs["rewards"][',
    ),
}


def missing(trainer_class=None) -> list[str]:
    """Each reliance the installed TRL's GRPOTrainer (or ``trainer_class``) no longer meets, in words naming it."""
    if trainer_class is None:
        from trl import GRPOTrainer as trainer_class
    source = inspect.getsource(trainer_class)
    problems = []
    for name, (why, used) in RELIED_ON.items():
        attribute = name.split(".", 1)[1]
        defined = hasattr(trainer_class, attribute) or f"self.{attribute} =" in source
        if not defined or used not in source:
            problems.append(f"TRL's {name} is gone or no longer used as grpo-core expects ({used!r} not found): "
                            f"grpo-core needs it because {why}")
    return problems


def set_reward_weights(trainer, weights: list[float]) -> None:
    """Make TRL weigh the rewards by ``weights`` from the next batch on (see RELIED_ON)."""
    import torch

    trainer.reward_weights = torch.tensor(weights, dtype=torch.float32)


def observe_rewards(trainer, observe: Callable[[list[list[float]]], None]) -> None:
    """Call ``observe(table)`` with each training generation batch's scores, one row per completion, one column per
    reward, gathered over all processes (so every process sees the same table)."""
    def observed(table, *batch):
        observe(table.detach().float().cpu().tolist())
        return table

    wrap_rewards(trainer, observed, "adaptive reward weights")


def wrap_rewards(trainer, change: Callable, needed_by: str = "grpo-core") -> None:
    """From the next training batch on, TRL uses ``change(table, prompts, completions, completion_ids)`` in place of
    the batch's scores: ``table`` is the (completions x rewards) tensor gathered over all processes, the others this
    process's part of the batch as TRL passes them to the rewards. Evaluation batches are left as they are. Wrapping
    again nests: the change added last sees what the earlier ones returned."""
    calculate = getattr(trainer, "_calculate_rewards", None)
    if calculate is None:
        raise UsageError(f"{needed_by} need TRL's GRPOTrainer._calculate_rewards, which this TRL version lacks; use "
                         "the TRL version grpo-core requires")

    def calculate_and_change(inputs, prompts, completions, completion_ids_list):
        table = calculate(inputs, prompts, completions, completion_ids_list)
        if not trainer.model.training:
            return table
        return change(table, prompts, completions, completion_ids_list)

    trainer._calculate_rewards = calculate_and_change


def last_batch(trainer) -> tuple[list, list, dict[str, list]] | None:
    """The last generation batch as ``(prompts, completions, {reward: scores})``; None before the first one."""
    logs = getattr(trainer, "_logs", None)
    if not logs or not logs.get("completion"):
        return None
    return list(logs["prompt"]), list(logs["completion"]), {name: list(v) for name, v in logs["rewards"].items()}


def stored_attributes(state, callback_name: str) -> dict:
    """The attributes a callback's ``state()`` saved in the checkpoint a run resumes from, {} without one.

    transformers keeps them in ``TrainerState.stateful_callbacks``, keyed by class name, as a dict or, for several
    callbacks of one class, a list of them; the first is this run's.
    """
    stored = (state.stateful_callbacks or {}).get(callback_name)
    if isinstance(stored, list):
        stored = stored[0] if stored else None
    return (stored or {}).get("attributes") or {}
