"""Finding the JSON in a completion and parsing it within size and nesting limits.

Only the standard library is used here: the scan is linear in the length of the text, and
nothing deeper than ``max_depth`` or longer than ``max_chars`` reaches ``json.loads`` (whose
recursion would otherwise raise RecursionError on deeply nested input).
"""

from __future__ import annotations

import json
import math
import re

MODES = ("auto", "whole", "fenced", "first")


class _NoJson:
    """The result of a search that found no JSON (distinct from a parsed JSON ``null``)."""

    def __repr__(self) -> str:
        return "NO_JSON"


NO_JSON = _NoJson()

# A JSON string (possessive, so an unterminated quote costs one linear pass) or a bracket.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*+"|[\[\]{}]', re.S)
_OPENER = re.compile(r"[\[{]")
_FENCE = re.compile(r"`{3,}")
_INLINE_TAG = re.compile(r"[ \t]*json\b", re.I)


def extract_json(text: str, mode: str = "auto", max_chars: int = 100_000, max_depth: int = 64):
    """The JSON value found in ``text`` by ``mode``, or ``NO_JSON``.

    ``whole``: the whole text (surrounding whitespace ignored). ``fenced``: the first fenced
    block tagged ``json`` that parses, else the first untagged one. ``first``: the first
    balanced ``{...}`` or ``[...]`` that parses, scanning left to right; a value that fails to
    parse is skipped as a whole, and an opening bracket that does not close within
    ``max_chars`` ends the search (a truncated answer earns nothing for the fragments inside
    it). ``auto``: whole, then fenced, then first. A candidate longer than ``max_chars`` or
    nested deeper than ``max_depth`` counts as unparseable, and so do NaN/Infinity, numbers too
    large for a finite float (``1e400``) and
    integers too long for Python to convert. Text up to a closing ``</think>`` is reasoning,
    not the answer, and is left out first.
    """
    cut = text.rfind("</think>")
    if cut >= 0:
        text = text[cut + len("</think>") :]
    if mode == "whole":
        return parse_limited(text.strip(), max_chars, max_depth)
    if mode == "fenced":
        return _from_fences(text, max_chars, max_depth)
    if mode == "first":
        return _first_balanced(text, max_chars, max_depth)
    if mode != "auto":
        raise ValueError(f"extract must be one of {', '.join(MODES)}; got {mode!r}")
    for find in (lambda: parse_limited(text.strip(), max_chars, max_depth),
                 lambda: _from_fences(text, max_chars, max_depth),
                 lambda: _first_balanced(text, max_chars, max_depth)):
        value = find()
        if value is not NO_JSON:
            return value
    return NO_JSON


def parse_limited(candidate: str, max_chars: int, max_depth: int):
    """``json.loads(candidate)`` when it is strict JSON within the limits, else ``NO_JSON``."""
    if not candidate or len(candidate) > max_chars or exceeds_depth(candidate, max_depth):
        return NO_JSON
    try:
        return json.loads(candidate, parse_constant=_reject_constant, parse_float=_finite_float)
    except (ValueError, RecursionError):  # JSONDecodeError, and int() refusing over 4300 digits
        return NO_JSON


def exceeds_depth(text: str, max_depth: int) -> bool:
    """Whether brackets outside JSON strings nest deeper than ``max_depth`` (a linear scan)."""
    if text.count("[") + text.count("{") <= max_depth:
        return False
    depth = 0
    for token in _TOKEN.finditer(text):
        char = text[token.start()]
        if char in "[{":
            depth += 1
            if depth > max_depth:
                return True
        elif char in "]}":
            depth -= 1
    return False


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):  # 1e400 overflows: as unparseable as Infinity
        raise ValueError(f"{text} is too large for a finite number")
    return value


def _from_fences(text: str, max_chars: int, max_depth: int):
    untagged = []
    for tag, body in _fenced_blocks(text):
        if tag == "json":
            value = parse_limited(body.strip(), max_chars, max_depth)
            if value is not NO_JSON:
                return value
        elif tag == "":
            untagged.append(body)
    for body in untagged:
        value = parse_limited(body.strip(), max_chars, max_depth)
        if value is not NO_JSON:
            return value
    return NO_JSON


def _fenced_blocks(text: str):
    """Yield ``(language tag, body)`` for each closed Markdown code fence, in order."""
    if "```" not in text:
        return
    runs = _FENCE.finditer(text)
    for opening in runs:
        closing = next((run for run in runs if len(run.group()) >= len(opening.group())), None)
        if closing is None:
            return
        inner = text[opening.end() : closing.start()]
        info, newline, body = inner.partition("\n")
        if newline:
            yield info.strip().lower(), body
        else:  # a one-line fence such as ```json {"a": 1}```
            tag = _INLINE_TAG.match(inner)
            yield ("json", inner[tag.end() :]) if tag else ("", inner)


def _first_balanced(text: str, max_chars: int, max_depth: int):
    position = 0
    while True:
        opener = _OPENER.search(text, position)
        if opener is None:
            return NO_JSON
        start = opener.start()
        depth = deepest = 0
        end = None
        # A value longer than max_chars would be refused anyway: stop looking there.
        for token in _TOKEN.finditer(text, start, start + max_chars):
            char = text[token.start()]
            if char == '"':
                continue
            if char in "[{":
                depth += 1
                deepest = max(deepest, depth)
            else:
                depth -= 1
                if depth == 0:
                    end = token.end()
                    break
        if end is None:  # never closes within max_chars
            return NO_JSON
        if deepest <= max_depth:
            try:
                return json.loads(text[start:end], parse_constant=_reject_constant, parse_float=_finite_float)
            except (ValueError, RecursionError):
                pass
        position = end
