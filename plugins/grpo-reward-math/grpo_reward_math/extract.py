"""Finding the answer in a completion: the answer tag, the last ``\\boxed{}``, or a number in prose.

Everything here is linear in the length of the text (no nested lazy regexes), so a 1 MB
completion or a million unbalanced tags or braces costs milliseconds, not minutes.
"""

from __future__ import annotations

import re
from collections import deque
from functools import lru_cache

from grpo_core.numbers import NUMBER_TOKEN, Number, parse_number_token

MAX_BOXED_TRIES = 8  # unbalanced \boxed{ occurrences tried, from the last one back

_BOXED = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_BRACES = re.compile(r"\\[{}]|[{}]")
_HASHES = re.compile(r"####\s*")
_ANCHOR = re.compile(
    r"(?i:\banswer\b)(?:\s+(?:is|was|would\s+be|will\s+be))?\s*[:=]?\s*(?:\*\*)?\s*(?=[-$€£¥₹₩₽.\d])"
)


@lru_cache(maxsize=32)
def _tag_patterns(tag: str) -> tuple[re.Pattern, re.Pattern]:
    name = re.escape(tag)
    return re.compile(rf"<{name}\s*>", re.I), re.compile(rf"</{name}\s*>", re.I)


def tag_content(text: str, tag: str = "answer") -> str | None:
    """The text inside the last complete ``<tag>...</tag>`` pair, or None if there is none."""
    opening, closing = _tag_patterns(tag)
    close = None
    for close in closing.finditer(text):
        pass
    if close is None:
        return None
    start = None
    for start in opening.finditer(text, 0, close.start()):
        pass
    if start is None:
        return None
    return text[start.end() : close.start()]


def last_boxed(text: str) -> str | None:
    """The content of the last balanced ``\\boxed{...}`` (or ``\\fbox``), or None.

    ``\\{`` and ``\\}`` inside count as literal braces, so ``\\boxed{\\{1, 2\\}}`` gives ``\\{1, 2\\}``;
    ``\\boxed 5`` gives ``5``.
    """
    if "\\" not in text:
        return None
    starts = deque((m.end() for m in _BOXED.finditer(text)), maxlen=MAX_BOXED_TRIES)
    for end in reversed(starts):
        content = _braced(text, end)
        if content is not None:
            return content
    return None


def _braced(text: str, index: int) -> str | None:
    while index < len(text) and text[index] in " \t":
        index += 1
    if index >= len(text):
        return None
    if text[index] != "{":
        token = re.match(r"[^\s$\\{}]+", text[index : index + 100])
        return token.group(0) if token else None
    depth = 0
    for brace in _BRACES.finditer(text, index):
        symbol = brace.group(0)
        if symbol == "{":
            depth += 1
        elif symbol == "}":
            depth -= 1
            if depth == 0:
                return text[index + 1 : brace.start()]
    return None


def has_markup(text: str) -> bool:
    """Whether the text has LaTeX or expression markup that only math-verify can read."""
    return "\\" in text or "^" in text or "{" in text


def anchored_number(text: str) -> Number | None:
    """The number after the last ``####`` or ``answer is``/``answer:``, or None if there is no such anchor."""
    for pattern in (_HASHES, _ANCHOR):
        anchor = None
        for anchor in pattern.finditer(text):
            pass
        if anchor is not None:
            token = NUMBER_TOKEN.match(text, anchor.end())
            if token is not None:
                return parse_number_token(token) or _UNREADABLE
    return None


def last_number(text: str) -> Number | None:
    """The last number written in the text (an unreadable one, e.g. ``1e99999999999``, matches nothing)."""
    token = None
    for token in NUMBER_TOKEN.finditer(text):
        pass
    if token is None:
        return None
    return parse_number_token(token) or _UNREADABLE


def prose_number(text: str) -> Number | None:
    """The answer of a plain-text completion: an anchored number if there is one, else the last number."""
    return anchored_number(text) or last_number(text)


# Stands for a number too large to read: it equals nothing, so it scores as a wrong answer.
_UNREADABLE = Number(("unreadable",), False)
