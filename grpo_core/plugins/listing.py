"""Rows for ``grpo-run rewards|datasets|environments|profiles|models``: plain data, printed as a table or JSON."""

from __future__ import annotations

from grpo_core.plugins import get_registry


def rows(kind: str) -> list[dict]:
    registry = get_registry()
    specs = [registry.items[kind][name] for name in sorted(registry.items[kind])]
    return [_ROWS[kind](spec) for spec in specs]


def _params(spec) -> list[str]:
    return [param.describe() for param in spec.params]


def _reward(spec) -> dict:
    params = {p.name: p.default for p in spec.params}
    columns = spec.columns(params) if callable(spec.columns) else spec.columns
    return {
        "name": spec.name,
        "description": spec.description,
        "bounds": list(spec.bounds),
        "columns": list(columns),
        "parameters": _params(spec),
        "weight": spec.weight,
        "distribution": spec.distribution,
    }


def _dataset(spec) -> dict:
    return {
        "name": spec.name,
        "description": spec.description,
        "columns": list(spec.columns),
        "parameters": _params(spec),
        "distribution": spec.distribution,
    }


def _environment(spec) -> dict:
    return {
        "name": spec.name,
        "description": spec.description,
        "tools": spec.tool_names(),
        "reward": list(spec.bounds) if callable(getattr(spec.environment_class, "get_reward", None)) else "-",
        "columns": list(spec.columns),
        "parameters": _params(spec),
        "distribution": spec.distribution,
    }


def _profile(spec) -> dict:
    return {
        "name": spec.name,
        "description": spec.description,
        "lora": bool(spec.lora),
        "launcher": bool(spec.launcher),
        "distribution": spec.distribution,
    }


def _model(spec) -> dict:
    return {
        "name": spec.name,
        "description": spec.description,
        "offline": bool(spec.available()),
        "distribution": spec.distribution,
    }


_ROWS = {"rewards": _reward, "datasets": _dataset, "environments": _environment, "profiles": _profile,
         "models": _model}


def cell(value) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value)) if value and not isinstance(value[0], float) else str(tuple(value)) if value else "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
