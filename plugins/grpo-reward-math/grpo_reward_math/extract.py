"""Finding the final answer in a completion: the answer tag, the last ``\\boxed{}``, a closing answer line.

Everything here is linear in the length of the text (no nested lazy regexes), so a 1 MB
completion or a million unbalanced tags or braces costs milliseconds, not minutes.
"""

from __future__ import annotations

import re
from collections import deque

from grpo_core import Number, find_numbers, parse_number

MAX_BOXED_TRIES = 8  # unbalanced \boxed{ occurrences tried, from the last one back
MAX_GROUP = 12  # boxes joined into one list answer at most
MAX_WHOLE = 200  # a completion longer than this is never taken as one bare answer

_BOXED = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_BRACES = re.compile(r"\\[{}]|[{}]")
_HASHES = re.compile(r"####\s*")
_ANCHOR = re.compile(
    r"(?i:\banswer\b)(?:\s+(?:is|was|would\s+be|will\s+be))?\s*[:=]?\s*(?:\*\*)?\s*(?=[-$€£¥₹₩₽.\d])"
)
# A final-answer marker: "#### ", "answer:", "the (final) answer is", "Final Answer: The final answer is".
_MARKER = re.compile(
    r"####|(?<![</])(?i:\banswer\b)(?:\s*(?:is|was|would\s+be|will\s+be|[:=]))*(?:\s*\*\*)?[ \t]*:?"
)
# What may stand between two boxes of one list answer: commas, "and", "or", spacing, math delimiters.
_SEPARATOR = re.compile(
    r"(?:\s|[,;.$]|[A-Za-z](?:_\{?\w+\}?)?\s*=|\\[\[\]()]|\\q?quad|\\[,;: ]|\\text\{[^{}]{0,40}\}|\band\b|\bor\b|&|\\\\)*",
)
_INLINE_MATH = (("$$", "$$"), ("\\[", "\\]"), ("$", "$"), ("\\(", "\\)"))
_SENTENCE_END = re.compile(r"\.(?:\s|$)|\n|(?i:\bI hope\b)")
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")


def boxes(text: str, limit: int = MAX_GROUP) -> list[tuple[int, int, str]]:
    """The last balanced ``\\boxed{...}`` (or ``\\fbox``) as ``(start, end, content)``, in text order.

    ``\\{`` and ``\\}`` inside count as literal braces, so ``\\boxed{\\{1, 2\\}}`` gives ``\\{1, 2\\}``;
    ``\\boxed 5`` gives ``5``. A box inside a box found is skipped; at most ``limit`` boxes and
    MAX_BOXED_TRIES unbalanced ones are tried.
    """
    if "\\" not in text:
        return []
    starts = deque(_BOXED.finditer(text), maxlen=limit + MAX_BOXED_TRIES)
    found: list[tuple[int, int, str]] = []
    failures = 0
    for match in reversed(starts):
        if found and match.end() > found[-1][0]:
            continue  # nested in the box after it
        span = _braced(text, match.end())
        if span is None:
            failures += 1
            if failures >= MAX_BOXED_TRIES:
                break
            continue
        found.append((match.start(), span[1], span[0]))
        if len(found) >= limit:
            break
    return found[::-1]


def all_boxes(text: str) -> list[tuple[int, int, str]]:
    """Every balanced ``\\boxed{...}`` (or ``\\fbox``) as ``(start, end, content)``, in text order; a box inside
    a box found is skipped. One pass matches all the braces, so it stays linear however many boxes, nested or
    unbalanced, the text holds."""
    if "\\" not in text:
        return []
    closes: dict[int, int] = {}
    stack: list[int] = []
    for brace in _BRACES.finditer(text):
        if brace.group(0) == "{":
            stack.append(brace.start())
        elif brace.group(0) == "}" and stack:
            closes[stack.pop()] = brace.end()
    found: list[tuple[int, int, str]] = []
    for match in _BOXED.finditer(text):
        if found and match.start() < found[-1][1]:
            continue  # nested in the box before it
        index = match.end()
        while index < len(text) and text[index] in " \t":
            index += 1
        if index < len(text) and text[index] == "{":
            end = closes.get(index)
            if end is not None:
                found.append((match.start(), end, text[index + 1 : end - 1]))
        else:
            span = _braced(text, index)
            if span is not None:
                found.append((match.start(), span[1], span[0]))
    return found


def last_boxed(text: str) -> str | None:
    """The content of the last balanced ``\\boxed{...}``, or None."""
    found = boxes(text, 1)
    return found[-1][2] if found else None


def box_group(text: str, found: list[tuple[int, int, str]]) -> list[str]:
    """The contents of the last run of boxes joined only by separators (``\\boxed{1}, \\boxed{2}``)."""
    if not found:
        return []
    group = [found[-1]]
    for box in reversed(found[:-1]):
        if not _joined(text[box[1] : group[0][0]]):
            break
        group.insert(0, box)
    return [content for _, _, content in group]


def box_runs(text: str, found: list[tuple[int, int, str]]) -> list[list[str]]:
    """The contents of ``found`` (boxes in text order) cut into runs joined only by separators, MAX_GROUP at most each."""
    runs: list[list[str]] = []
    end = None
    for start, stop, content in found:
        if runs and len(runs[-1]) < MAX_GROUP and _joined(text[end:start]):
            runs[-1].append(content)
        else:
            runs.append([content])
        end = stop
    return runs


def _joined(between: str) -> bool:
    return len(between) <= 80 and _SEPARATOR.fullmatch(between) is not None


def _braced(text: str, index: int) -> tuple[str, int] | None:
    while index < len(text) and text[index] in " \t":
        index += 1
    if index >= len(text):
        return None
    if text[index] != "{":
        token = re.match(r"[^\s$\\{}]+", text[index : index + 100])
        return (token.group(0), index + token.end()) if token else None
    depth = 0
    for brace in _BRACES.finditer(text, index):
        symbol = brace.group(0)
        if symbol == "{":
            depth += 1
        elif symbol == "}":
            depth -= 1
            if depth == 0:
                return text[index + 1 : brace.start()], brace.end()
    return None


def marked_answer(text: str) -> tuple[int, str] | None:
    """``(position, answer)`` after the last final-answer marker (``The answer is``, ``Answer:``, ``####``).

    The answer is a math block that starts right after the marker (``$...$`` and ``\\(...\\)`` on
    that line, ``$$...$$`` and ``\\[...\\]`` across lines), else the rest of its sentence or line.
    """
    marker = None
    for marker in _MARKER.finditer(text):
        pass
    if marker is None:
        return None
    rest = text[marker.end() :].lstrip(" \t*:")
    for start, end in _INLINE_MATH:
        if rest.startswith(start):
            close = rest.find(end, len(start))
            while close > 0 and end == "$" and rest[close - 1] == "\\":  # an escaped \$ is not a delimiter
                close = rest.find(end, close + 1)
            if close < 0:
                return None
            block = rest[: close + len(end)]
            if start in ("$", "\\(") and "\n" in block:
                return None  # inline math does not span lines
            return marker.start(), block
    stop = _SENTENCE_END.search(rest)
    answer = rest[: stop.start()] if stop else rest
    answer = answer.strip().strip('"').strip()
    return (marker.start(), answer) if answer else None


def whole_answer(text: str) -> str | None:
    """The completion itself when it is nothing but one answer (``42``, ``$\\frac{1}{2}$``, ``(1, 2]``)."""
    text = text.strip()
    if not text or len(text) > MAX_WHOLE or "\n" in text:
        return None
    for start, end in _INLINE_MATH:
        if text.startswith(start) and text.endswith(end) and len(text) > len(start) + len(end):
            inner = text[len(start) : -len(end)]
            return text if start not in inner else None
    if _WORD.search(text) and parse_number(text) is None:
        return None  # prose, not an answer (12 apples and 28 pct are answers)
    return text


def last_math(text: str) -> tuple[int, str] | None:
    """``(end, block)``: the last complete math block (``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``) that holds no prose."""
    best = None
    parts = text.replace("$$", "$").split("$")
    if len(parts) >= 3:
        last_inside = len(parts) - 2 if len(parts) % 2 == 1 else len(parts) - 3
        end = len(text) - len(parts[-1]) if len(parts) % 2 == 1 else len(text) - len(parts[-1]) - len(parts[-2]) - 1
        best = (end, f"${parts[last_inside]}$")
    for opening, closing in (("\\(", "\\)"), ("\\[", "\\]")):
        close = text.rfind(closing)
        start = text.rfind(opening, 0, close) if close > 0 else -1
        if start >= 0 and (best is None or close + len(closing) > best[0]):
            best = (close + len(closing), text[start : close + len(closing)])
    if best is None or not best[1].strip("$\\()[] \n"):
        return None
    if "\n" in best[1] and (best[1].startswith("\\(") or "$$" not in text):
        return None  # inline math does not span lines
    inner = re.sub(r"\\text\w*\{[^{}]*\}|\\(?:begin|end)\{\w*\*?\}", "", best[1])
    return None if _WORD.search(re.sub(r"\\[A-Za-z]+", "", inner)) else best


def anchored_number(text: str) -> Number | None:
    """The number after the last ``####`` or ``answer is``/``answer:``, or None if there is no such anchor."""
    for pattern in (_HASHES, _ANCHOR):
        anchor = None
        for anchor in pattern.finditer(text):
            pass
        if anchor is not None:
            token = next(find_numbers(text, anchor.end()), None)
            if token is not None and token.start == anchor.end():
                return token.number or UNREADABLE
    return None


def last_number(text: str) -> Number | None:
    """The last number written in the text (an unreadable one, e.g. ``1e99999999999``, matches nothing)."""
    token = None
    for token in find_numbers(text):
        pass
    if token is None:
        return None
    return token.number or UNREADABLE


def prose_number(text: str) -> Number | None:
    """The answer of a plain-text completion: an anchored number if there is one, else the last number."""
    return anchored_number(text) or last_number(text)


# Stands for a number too large to read: it equals nothing, so it scores as a wrong answer.
UNREADABLE = Number(("unreadable",))
