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


def _untagged(value):
    if isinstance(value, list):
        return [_untagged(v) for v in value]
    if isinstance(value, dict):
        if len(value) == 1 and _TUPLE in value:
            return tuple(_untagged(v) for v in value[_TUPLE])
        if len(value) == 1 and _ITEMS in value:
            return {_hashable(_untagged(k)): _untagged(v) for k, v in value[_ITEMS]}
        return {k: _untagged(v) for k, v in value.items()}
    return value


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def dump_entry(entry: dict) -> str:
    """The entry as JSON text that :func:`load_entry` turns back into an equal entry."""
    return json.dumps(_tagged(entry), ensure_ascii=False, default=str)


@lru_cache(maxsize=256)
def load_entry(text: str) -> dict:
    """The entry :func:`dump_entry` wrote (cached: a GRPO group scores one entry many times; do not mutate)."""
    return _untagged(json.loads(text))
