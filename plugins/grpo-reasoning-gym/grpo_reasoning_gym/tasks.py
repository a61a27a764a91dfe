"""reasoning-gym's tasks by name: which exist, what each is, mixing weights and per-task settings.

reasoning_gym is imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import re

from grpo_core import UsageError

# Tasks that only combine other tasks, or need settings to produce anything; not offered alone.
NOT_TASKS = ("composite",)


def registry() -> dict:
    """reasoning-gym's registry: task name -> (dataset class, config dataclass)."""
    from reasoning_gym.factory import DATASETS

    return {name: classes for name, classes in DATASETS.items() if name not in NOT_TASKS}


def task_names() -> list[str]:
    return sorted(registry())


def describe(name: str) -> str:
    """A one-line description of a task, from its generator's docstring."""
    dataset_cls, config_cls = registry()[name]
    for source in (dataset_cls, config_cls):
        doc = (source.__doc__ or "").strip()
        if doc and not doc.startswith(f"{source.__name__}("):  # dataclasses document themselves by signature
            line = " ".join(doc.split("\n\n")[0].split())
            line = re.split(r"(?<=[a-z)])\. | - ", line)[0].rstrip(".:")
            return line if len(line) <= 100 else line[:99] + "…"
    return name.replace("_", " ")


def validate_task(name: str) -> None:
    names = task_names()
    if name not in names:
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise UsageError(
            f"unknown reasoning-gym task '{name}'{hint}; list them with `grpo-run reasoning-gym-tasks`"
        )


def parse_tasks(text: str | None) -> dict[str, float]:
    """``chain_sum,leg_counting:2`` -> ``{"chain_sum": 1.0, "leg_counting": 2.0}`` (mixing weights)."""
    weights: dict[str, float] = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        name, _, weight = part.partition(":")
        name = name.strip()
        validate_task(name)
        try:
            value = float(weight) if weight.strip() else 1.0
        except ValueError:
            value = -1.0
        if not value > 0 or value == float("inf"):
            raise UsageError(f"task weight in '{part}' must be a number above 0, e.g. {name}:2")
        if name in weights:
            raise UsageError(f"task '{name}' is listed twice in tasks={text!r}; list it once with its weight")
        weights[name] = value
    if not weights:
        raise UsageError("the reasoning-gym dataset needs tasks, e.g. --dataset-arg tasks=chain_sum,leg_counting:2")
    return weights


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside brackets or parentheses, so ``size=(2,4)`` stays whole."""
    parts, depth, current = [], 0, []
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def parse_settings(text: str | None, tasks: list[str]) -> dict[str, dict]:
    """``min_terms=2,leg_counting.max_animals=5`` -> settings per task, checked against each task's config.

    A bare ``KEY=VALUE`` applies to every selected task that has the field (at least one must);
    ``TASK.KEY=VALUE`` to that task only. Unknown fields are an error that lists the valid ones.
    """
    per_task: dict[str, dict] = {task: {} for task in tasks}
    for part in _split_top_level(text or ""):
        key, sep, raw = part.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"task setting '{part}' must look like KEY=VALUE or TASK.KEY=VALUE, e.g. min_terms=3")
        task, dot, field = key.rpartition(".")
        targets = [task] if dot else tasks
        if dot and task not in per_task:
            raise UsageError(
                f"task setting '{part}' names task '{task}', which is not selected; selected: {', '.join(tasks)}"
            )
        matched = False
        for name in targets:
            fields = config_fields(name)
            if field in fields:
                per_task[name][field] = convert(raw.strip(), fields[field], f"{name}.{field}")
                matched = True
            elif dot:
                raise UsageError(_unknown_field(field, name, fields))
        if not matched:
            raise UsageError(_unknown_field(field, tasks[0], config_fields(tasks[0])) if len(tasks) == 1 else
                             f"no selected task has the setting '{field}'; " +
                             "; ".join(f"{name}: {', '.join(config_fields(name))}" for name in tasks))
    return per_task


def _unknown_field(field: str, task: str, fields: dict) -> str:
    close = difflib.get_close_matches(field, list(fields), n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"task '{task}' has no setting '{field}'{hint}; its settings: {', '.join(fields)}"


def config_fields(task: str) -> dict[str, object]:
    """The task's config fields a user may set, with their defaults (``seed`` and ``size`` are the dataset's own)."""
    _, config_cls = registry()[task]
    fields = {}
    for field in dataclasses.fields(config_cls):
        if field.name in ("seed", "size") or not field.init:
            continue
        if field.default is not dataclasses.MISSING:
            fields[field.name] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            fields[field.name] = field.default_factory()
        else:
            fields[field.name] = None
    return fields


def convert(raw: str, default, where: str):
    """Text from the command line as the type of the field's default (a Python literal for lists and tuples)."""
    if isinstance(default, bool):
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise UsageError(f"task setting {where} expects true or false, got {raw!r}")
    if isinstance(default, str) or default is None and not re.match(r"^[-\d(\[{.]", raw):
        return raw
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        raise UsageError(f"task setting {where}={raw!r} is not a value of its kind (default: {default!r})") from None
    if isinstance(default, float) and isinstance(value, int):
        value = float(value)
    if isinstance(default, (list, tuple)) and isinstance(value, (list, tuple)):
        value = type(default)(value)
    if default is not None and not isinstance(value, type(default)):
        raise UsageError(f"task setting {where}={raw!r} must be a {type(default).__name__} like {default!r}")
    return value


def make_config(task: str, settings: dict, seed: int, size: int):
    """The task's config dataclass with ``settings``, validated by the task itself."""
    _, config_cls = registry()[task]
    names = {field.name for field in dataclasses.fields(config_cls)}
    extra = {key: value for key, value in (("seed", seed), ("size", size)) if key in names}
    try:
        config = config_cls(**settings, **extra)
        if hasattr(config, "validate"):
            config.validate()
    except (AssertionError, ValueError, TypeError) as error:
        shown = ", ".join(f"{k}={v!r}" for k, v in settings.items()) or "its defaults"
        raise UsageError(f"task '{task}' rejects the settings {shown}: {error or 'invalid value'}") from None
    return config


def make_generator(task: str, config, seed: int, size: int):
    dataset_cls, _ = registry()[task]
    try:
        return dataset_cls(config=config)
    except (AssertionError, ValueError) as error:
        raise UsageError(f"task '{task}' could not start with its settings: {error}") from None


def config_at_level(task: str, level: int, settings: dict, seed: int, size: int):
    """The task's config at ``level`` of its reasoning-gym curriculum (settings fill the other fields)."""
    from reasoning_gym.factory import create_curriculum, has_curriculum

    if not has_curriculum(task):
        raise UsageError(f"task '{task}' has no curriculum in reasoning-gym; train it without curriculum=true")
    curriculum = create_curriculum(task)
    curriculum.set_global_level(level)
    _, config_cls = registry()[task]
    names = set(config_cls.__dataclass_fields__)
    defaults = {**settings, **{k: v for k, v in (("seed", seed), ("size", size)) if k in names}}
    config = curriculum.generate_configuration(defaults)
    if hasattr(config, "validate"):
        config.validate()
    return config
