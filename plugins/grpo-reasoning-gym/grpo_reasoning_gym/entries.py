"""A reasoning-gym entry as JSON text and back, unchanged: tuples stay tuples, integer keys stay integers.

Checkers read the entry's metadata (ranges as tuples, graphs keyed by integers); plain JSON would
hand them lists and string keys, which some of them score differently.
"""

from __future__ import annotations

import json
from functools import lru_cache

_TUPLE = "__tuple__"
_ITEMS = "__items__"  # a dict whose keys are not all strings, as [key, value] pairs


def _tagged(value):
    if isinstance(value, tuple):
        return {_TUPLE: [_tagged(v) for v in value]}
    if isinstance(value, list):
        return [_tagged(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: _tagged(v) for k, v in value.items()}
        return {_ITEMS: [[_tagged(k), _tagged(v)] for k, v in value.items()]}
    return value


def _untag(value: dict):
    """One decoded JSON object back to what it stood for (json calls this innermost first, in C)."""
    if len(value) == 1:
        if _TUPLE in value:
            return tuple(value[_TUPLE])
        if _ITEMS in value:
            return {_hashable(k): v for k, v in value[_ITEMS]}
    return value


_DECODER = json.JSONDecoder(object_hook=_untag)  # built once: json.loads(..., object_hook=) builds one per call


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def dump_entry(entry: dict) -> str:
    """The entry as JSON text that :func:`load_entry` turns back into an equal entry."""
    return json.dumps(_tagged(entry), ensure_ascii=False, default=str)


@lru_cache(maxsize=256)
def load_entry(text: str) -> dict:
    """The entry :func:`dump_entry` wrote (cached: a GRPO group scores one entry many times; do not mutate)."""
    return _DECODER.decode(text)
