"""The spellings of names and schedules on the command line and in config files, read from the text alone
(nothing is imported): a reward or dataset named by a path, and ``--reward-weight NAME=SCHEDULE``."""

from __future__ import annotations

import os

from grpo_core.errors import UsageError

REMOTE_PREFIX = "remote:"  # ``remote:NAME``: reward NAME scored by a grpo-run serve server


def is_path_name(name: str) -> bool:
    """``name`` selects by path (``file.py:function``, ``module:function``), not ``remote:NAME``."""
    return ":" in name and not name.startswith(REMOTE_PREFIX)


def short_name(source: str) -> str:
    """The name a reward from ``source`` goes by: ``STEM:FUNCTION`` for a file, ``MODULE:FUNCTION`` for a module."""
    where, _, function = source.rpartition(":")
    if os.path.isabs(where):
        return f"{os.path.splitext(os.path.basename(where))[0]}:{function}"
    return source


def spelled_name(text: str) -> str:
    """The name a selection goes by, read from its spelling alone (nothing imported): ``short_name`` for a path."""
    if not is_path_name(text):
        return text
    where, _, function = text.rpartition(":")
    if where.endswith(".py") or os.path.isfile(where):
        return short_name(f"{os.path.abspath(where)}:{function}")
    return text


def parse_cli_schedule(text: str, name: str):
    """``--reward-weight NAME=SCHEDULE``'s SCHEDULE: a number, ``KIND``, ``KIND:key=value,...`` or a YAML mapping."""
    text = text.strip()
    if text.startswith("{"):
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError:
            raise UsageError(f"--reward-weight {name}={text} is not a YAML mapping; write it like "
                             f"'{name}={{kind: adaptive, window: 32}}'") from None
    kind, _, rest = text.partition(":")
    if not rest:
        try:
            return float(kind)
        except ValueError:
            pass
    values: dict = {"kind": kind.strip()}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--reward-weight {name}={text}: '{item}' is not KEY=VALUE; write it like "
                             f"{name}=linear:start=1,end=0.2")
        if values["kind"] == "steps" and key.strip().isdigit():  # steps:0=1,20=0.3 -> {weights: {0: 1, 20: 0.3}}
            values.setdefault("weights", {})[int(key)] = _number_or_text(value.strip())
        else:
            values[key.strip()] = _number_or_text(value.strip())
    return values


def _number_or_text(value: str):
    try:
        return int(value)
    except ValueError:
        try:
            return float(value)
        except ValueError:
            return value


def parse_cli_schedules(items) -> dict:
    """The repeated ``--reward-weight NAME=SCHEDULE`` options as a ``reward_schedules`` mapping."""
    result = {}
    for item in items or ():
        name, sep, text = item.partition("=")
        if not sep or not name.strip() or not text.strip():
            raise UsageError(f"--reward-weight '{item}' is not of the form NAME=SCHEDULE; write it like "
                             "--reward-weight math=adaptive or --reward-weight xml-format=linear:start=1,end=0.2")
        result[name.strip()] = parse_cli_schedule(text, name.strip())
    return result
