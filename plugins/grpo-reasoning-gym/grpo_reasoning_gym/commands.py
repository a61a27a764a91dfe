"""``grpo-run reasoning-gym-tasks``: every task with a one-line description."""

from __future__ import annotations

import json

import click


@click.command("reasoning-gym-tasks")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--settings", "task", metavar="TASK", help="Show one task's settings and their defaults.")
def reasoning_gym_tasks(as_json, task):
    """List reasoning-gym's tasks for --dataset reasoning-gym --dataset-arg tasks=NAME,...: how each is
    judged (exact number, the plugin's exact rule, the task's checker after a check of the answer's
    form, or the checker alone), where its checker runs (in the training process, or
    in a worker process under the reward's time limit), whether it has a curriculum, what it is."""
    from grpo_reasoning_gym import tasks as registry
    from grpo_reasoning_gym.reward import judged_by, judged_in_process

    if task:
        registry.validate_task(task)
        fields = {name: repr(value) for name, value in registry.config_fields(task).items()}
        click.echo(json.dumps(fields, indent=2) if as_json else "\n".join(f"{k}={v}" for k, v in fields.items()))
        return
    from reasoning_gym.factory import has_curriculum

    rows = [
        {"task": name, "judged by": judged_by(name),
         "checker runs in": "process" if judged_in_process(name) else "worker",
         "curriculum": has_curriculum(name), "description": registry.describe(name)}
        for name in registry.task_names()
    ]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    width = max(len(row["task"]) for row in rows)
    for row in rows:
        click.echo(f"{row['task']:<{width}}  {row['judged by']:<12}  {row['checker runs in']:<7}  "
                   f"{'curriculum' if row['curriculum'] else '-':<10}  "
                   f"{row['description']}")
