"""Where the final answer is, and the other final answers a completion writes beside it.

A completion states one final answer. Every ``\\boxed{}`` and every answer tag is a final answer wherever
it stands, so ``\\boxed{41} \\boxed{42}`` states two; the reward pays such a completion only when all of them
are the same value (``\\boxed{42} ... \\boxed{42}``). A run of boxes joined only by commas, ``and``, ``or`` or
spacing may also be one list answer. Inside one answer, a list of equations with different values
(``x = 25, x = 22``) states several values too. A box before a closing answer line (``The answer is ...``)
is work, not a final answer.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from grpo_core import Number, answer_tag, parse_number, same_number

from grpo_reward_math.extract import (
    all_boxes,
    box_group,
    box_runs,
    boxes,
    last_math,
    last_number,
    marked_answer,
    whole_answer,
)
from grpo_reward_math.final import final_statement, last_sentence
from grpo_reward_math.forms import exact_value
from grpo_reward_math.symbolic import MAX_TEXT

MAX_FINALS = 12  # different final answers besides the last one read; more are refused unread
MAX_LIST = 400  # a list of equations is read from the last characters of an answer


@dataclass(frozen=True)
class Found:
    """Where the final answer is: ``span`` (text), ``group`` (contents of a run of boxes), or ``number``.

    ``earlier`` holds the other final answers before it (boxes and answer tags, each different text once).
    """

    span: str | None = None
    group: tuple[str, ...] = ()
    number: Number | None = None
    source: str = ""  # tag, box, marker, whole, sentence (the final sentence), math (the last math block) or number
    earlier: tuple[Found, ...] = ()


def find_answer(text: str, extract: str = "auto", tag: str = "answer") -> Found | None:
    """The final answer, or None when the completion states none.

    ``auto``: the last ``<tag>``; else whichever comes last of the last ``\\boxed{}`` and a
    final-answer line (``The answer is ...``, ``Answer: ...``, ``#### ...``); else the whole
    completion when it is nothing but an answer; else the one value its last sentence states
    (``... I get 42.``). A number from earlier reasoning is never the answer; ``last-number``
    takes the last number written anywhere.
    """
    if extract == "last-number":
        number = last_number(text)
        if number is None:
            return None
        finals = [Found(span=content, source="tag") for _, _, content in tag_spans(text, tag)]
        return Found(number=number, source="number", earlier=_distinct(finals + _run(text, all_boxes(text))))
    if extract in ("auto", "answer-tag"):
        span = answer_tag(text, tag)
        if span is not None:
            return Found(span=span, source="tag", earlier=_other_tags(text, tag, span, boxed=extract == "auto"))
        if extract == "answer-tag":
            return None
    found = boxes(text)
    marked = marked_answer(text) if extract == "auto" else None
    if found and (marked is None or marked[0] < found[-1][0]):
        group = tuple(box_group(text, found))
        first = found[-len(group)][0]
        earlier = _distinct(_run(text[:first], all_boxes(text[:first])))
        return Found(span=f"\\boxed{{{found[-1][2]}}}", group=group, source="box", earlier=earlier)
    if extract == "boxed":
        return None
    if marked is not None:
        return Found(span=marked[1], source="marker")
    whole = whole_answer(text)
    if whole is not None:
        return Found(span=whole, source="whole")
    stated = final_statement(text)
    math = last_math(text[-MAX_TEXT:]) if stated is None else None  # a statement written as math, as math-verify reads prose
    if (stated is None and math is None) or several_values(last_sentence(text)):
        return None  # no statement, or one of several values ("So x = 25 or x = 22.")
    return Found(span=stated, source="sentence") if stated is not None else Found(span=math[1], source="math")


def _run(text: str, found: list[tuple[int, int, str]]) -> list[Found]:
    """Boxes as final answers: each run of boxes joined only by separators is one (a list, or one value)."""
    return [Found(span=f"\\boxed{{{run[-1]}}}", group=tuple(run), source="box") for run in box_runs(text, found)]


def _distinct(finals, last: str | None = None) -> tuple[Found, ...]:
    """Each different final answer once, never ``last``; MAX_FINALS + 1 at most (one more than are read)."""
    kept: dict[str, Found] = {}
    for final in finals:
        key = "".join("|".join(final.group or (final.span or "",)).split())
        if key != last and key not in kept:
            kept[key] = final
            if len(kept) > MAX_FINALS:
                break
    return tuple(kept.values())


@lru_cache(maxsize=32)
def _tag_patterns(tag: str) -> tuple[re.Pattern, re.Pattern]:
    name = re.escape(tag)
    return re.compile(rf"<{name}\s*>", re.I), re.compile(rf"</{name}\s*>", re.I)


def tag_spans(text: str, tag: str = "answer") -> list[tuple[int, int, str]]:
    """Every complete ``<tag>...</tag>`` pair as ``(start, end, content)``, read as ``answer_tag`` reads the last."""
    opening, closing = _tag_patterns(tag)
    found, previous = [], 0
    for close in closing.finditer(text):
        start = None
        for start in opening.finditer(text, previous, close.start()):
            pass
        if start is not None:
            found.append((start.start(), close.end(), text[start.end() : close.start()]))
        previous = close.end()
    return found


def _other_tags(text: str, tag: str, last: str, boxed: bool) -> tuple[Found, ...]:
    """The answer tags before the last one and, when ``boxed``, the boxes outside every tag."""
    closing = _tag_patterns(tag)[1]
    first = closing.search(text)
    if (not boxed or "\\" not in text) and (first is None or closing.search(text, first.end()) is None):
        return ()  # one tag and no box: nothing else to read
    tags = tag_spans(text, tag)
    finals = [Found(span=content, source="tag") for _, _, content in tags[:-1]]
    if boxed:
        starts = [start for start, _, _ in tags]
        outside = [box for box in all_boxes(text) if bisect_right(starts, box[0]) == 0
                   or box[1] > tags[bisect_right(starts, box[0]) - 1][1]]
        finals += _run(text, outside)
    return _distinct(finals, "".join(last.split()))


# A list of equations (x = 25, x = 22): a name, "=", its value, joined by commas, "or", "and", \quad.
_NAME = r"(?<![A-Za-z\\])(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?\w+\}?)?"
_DELIMITERS = re.compile(r"\$\$?|\\[()\[\]]")
_JOIN = re.compile(
    rf"(?:\s*(?:,|;|\bor\b|\band\b|\\q?quad|\\text\{{\s*(?:or|and)\s*\}})\s*)+(?={_NAME}\s*=)"
)
_EQUATION = re.compile(rf"{_NAME}\s*=\s*(?:[^=]*=\s*)*(?P<value>[^=]*?)[\s.]*")
_PROSE = re.compile(r"[,;]|(?<![\\A-Za-z])[A-Za-z]{2,}")


def equation_values(span: str) -> list[str]:
    """The values of a list of two or more equations that ends the span (``x = 25, x = 22``), else ``[]``.

    Prose may come before the first equation (``So x = 25 or x = 22``); a chain (``x = 2 + 3 = 5``) gives its
    last value. Text that goes on after an equation (``a = 3, so a + b = 7``) is no list.
    """
    span = span.strip()
    if span.startswith("\\boxed{") and span.endswith("}"):
        span = span[7:-1]
    text = _DELIMITERS.sub(" ", span[-MAX_LIST:])
    values: list[str] = []
    for part in reversed(_JOIN.split(text)):
        value = _equation(part)
        if value is None:  # the first equation of the list, after prose
            heads = (_equation(part[name.start() :]) for name in re.finditer(rf"{_NAME}\s*=", part))
            values += [v for v in heads if v is not None][:1]
            break
        values.append(value)
    return values[::-1] if len(values) > 1 else []


def _equation(part: str) -> str | None:
    match = _EQUATION.fullmatch(part.strip())
    if match is None or not match.group("value"):
        return None
    unit_free = re.sub(r"\\[A-Za-z]+|(?<=\d),(?=\d{3})", "", part.split("=", 1)[1])
    return None if _PROSE.search(unit_free) else match.group("value")


def several_values(span: str) -> bool:
    """Whether the span ends in equations of different values; values are compared exactly, never rounded."""
    values = equation_values(span) if span.count("=") > 1 else []
    if not values:
        return False
    numbers = [parse_number(v) or exact_value(v) for v in values]
    if None in numbers:
        return len({"".join(v.split()) for v in values}) > 1
    return not all(same_number(numbers[0], n) for n in numbers[1:])
