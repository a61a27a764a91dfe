"""How values appear in messages and JSON: long text clipped, floats that JSON cannot hold as strings."""

from __future__ import annotations

import math
from typing import Any


def clip(value: Any, limit: int = 1000) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"... ({len(value):,} characters)"
    return value


def clip_repr(value: Any, limit: int = 80) -> str:
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit]) + f"... ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= limit + 20 else text[: limit + 20] + "..."


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def show(value: Any) -> str:
    if isinstance(value, str):
        return clip_repr(value, 200)
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {show(v)}" for k, v in value.items()) + "}"
    return repr(value)
