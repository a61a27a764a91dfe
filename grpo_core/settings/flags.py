"""Parsing the repeatable ``NAME[=WEIGHT]`` and ``NAME.KEY=VALUE`` command-line options."""

from __future__ import annotations

import math

from grpo_core.errors import UsageError


def parse_reward_options(rewards, reward_args) -> tuple[list[str], dict[str, float], dict[str, dict]]:
    """``--reward math=2.0 --reward-arg length.target=300`` -> (names, weights, args).

    Names are checked against the registry by ``load_rewards``; here only the syntax is.
    """
    names: list[str] = []
    weights: dict[str, float] = {}
    for item in rewards or ():
        name, sep, weight = item.partition("=")
        name = name.strip()
        if not name:
            raise UsageError(f"--reward '{item}' has no name; write --reward NAME or --reward NAME=WEIGHT")
        if name in names:
            raise UsageError(f"reward '{name}' is selected twice; give it once, with its weight: --reward {name}=W")
        names.append(name)
        if sep:
            weights[name] = parse_weight(weight, name)
    args: dict[str, dict] = {}
    for item in reward_args or ():
        owner, key, value = split_dotted(item, "--reward-arg", "NAME.KEY=VALUE")
        args.setdefault(owner, {})[key] = value
    return names, weights, args


def parse_weight(text: str, name: str) -> float:
    try:
        weight = float(text)
    except ValueError:
        raise UsageError(
            f"weight '{text}' for reward '{name}' is not a number; write --reward {name}=1.5"
        ) from None
    if not math.isfinite(weight) or weight < 0:
        raise UsageError(f"weight {text} for reward '{name}' must be a finite number >= 0")
    return weight


def split_dotted(item: str, option: str, form: str) -> tuple[str, str, str]:
    """``owner.key=value`` -> (owner, key, value), or a UsageError showing ``form``."""
    left, sep, value = item.partition("=")
    owner, dot, key = left.partition(".")
    if not sep or not dot or not owner.strip() or not key.strip():
        raise UsageError(f"{option} '{item}' is not of the form {form}")
    return owner.strip(), key.strip(), value


def parse_key_values(items, option: str) -> dict[str, str]:
    """``KEY=VALUE`` items (``--dataset-arg``, ``--set``) -> dict."""
    result = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{option} '{item}' is not of the form KEY=VALUE")
        result[key.strip()] = value
    return result
