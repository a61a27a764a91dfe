"""Dataset and reward ``reasoning-gym``: reasoning-gym's procedural tasks, scored strictly.

Importing this module is cheap: reasoning_gym, datasets, transformers and hypothesis are
imported only inside the functions that use them.
"""

from __future__ import annotations

from grpo_core import DatasetSpec, Param, RewardSpec, dataset_param, hookimpl

from grpo_reasoning_gym.curriculum import observe
from grpo_reasoning_gym.dataset import SYSTEM_PROMPT
from grpo_reasoning_gym.properties import CHECKS
from grpo_reasoning_gym.reward import (EXTRACT_MODES, NUMBER_TASKS, TIMEOUT_S, reasoning_gym_reward,
                                      reasoning_gym_rewards, validate_params)

__all__ = ["DATASET", "NUMBER_TASKS", "SPEC", "reasoning_gym_reward", "reasoning_gym_rewards", "register_commands",
           "register_datasets", "register_rewards"]


SPEC = RewardSpec(
    name="reasoning-gym",
    description="1 if the answer is right for the row's reasoning-gym task (exact numbers, else the task's checker), "
                "else 0; strict=false passes the checker's partial credit through",
    func=reasoning_gym_rewards,
    bounds=(0.0, 1.0),
    columns=("answer", "task", "entry"),
    batched=True,
    timeout=TIMEOUT_S,  # one answer's task checker, where it runs in a worker process (past it: 0.0)
    params=(
        Param("strict", True, bool, "true: 1.0 only for a right answer, else 0.0; false: the task checker's graded "
                                    "score (which pays some wrong answers)"),
        Param("tag", "answer", str, "the tag holding the answer, as in <answer>42</answer>"),
        Param("extract", "answer-tag", str, "answer-tag: the last <tag> pair (none: 0.0); whole: the whole completion",
              EXTRACT_MODES),
    ),
    checks=CHECKS,
    validate=validate_params,
    observe=observe,
)

DATASET = DatasetSpec(
    "reasoning-gym",
    "reasoning-gym's procedural tasks (offline, seeded, mixable); list them with `grpo-run reasoning-gym-tasks`",
    load="grpo_reasoning_gym.dataset:load",
    columns=("prompt", "answer", "task", "entry"),
    params=(
        Param("tasks", "chain_sum", str, "task names with optional mixing weights, e.g. chain_sum,leg_counting:2 "
                                         "(all of them: grpo-run reasoning-gym-tasks)"),
        dataset_param("size", 1000),
        dataset_param("seed"),
        Param("settings", None, str, "task settings from each task's config, e.g. min_terms=3,leg_counting.max_animals=5 "
                                     "(a bare KEY applies to every selected task that has it)"),
        dataset_param("system_prompt", SYSTEM_PROMPT),
        Param("chat", True, bool, "true: chat messages (system, user); false: one plain text prompt"),
        Param("few_shot", 0, int, "solved examples of the row's own task (from their own seed, never the row's "
                                  "question) put before each question, answered as <answer>gold</answer>",
              minimum=0, maximum=8),
        Param("curriculum", False, bool, "raise a task's difficulty (reasoning-gym's curriculum levels) once the "
                                         "rolling accuracy on it passes threshold"),
        Param("threshold", 0.7, float, "curriculum: rolling accuracy that raises the level"),
        Param("window", 64, int, "curriculum: completions in the rolling accuracy"),
    ),
    callbacks="grpo_reasoning_gym.curriculum:callbacks",
)


@hookimpl
def register_rewards(register):
    register(SPEC)


@hookimpl
def register_datasets(register):
    register(DATASET)


@hookimpl
def register_commands(cli):
    from grpo_reasoning_gym.commands import reasoning_gym_tasks

    cli.add_command(reasoning_gym_tasks)
