"""Completions that do not do the task: the pieces a reward's ``degenerate`` callable is built from.

Every helper returns a list of ``(label, completion)`` pairs, the shape ``RewardSpec.degenerate``
returns, so a plugin joins the ones that fit its task::

    def _degenerate(prompt, columns, params):
        from grpo_core.testing import copied_prompt, placeholders, prompt_numbers

        answer = "<answer>{}</answer>"
        return [*copied_prompt(prompt, answer), *prompt_numbers(prompt, answer), *placeholders(("answer",))]

The checks apply ``generic_degenerate`` to every reward, declared or not. This module imports
nothing heavy, so the checks and plugins can use it freely.
"""

from __future__ import annotations

import re

ZERO_WIDTH_SPACE = "\u200b"
# A filler sentence with no digits, tags or answer words, so it never does a task by accident.
FILLER_SENTENCE = "This step restates what was said before. "
PADDING_SIZE = 1000  # characters: longer than any ordinary completion the checks draw

_NUMBER = r"\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?%?"
_OPERATOR = r"(?:\\times|\\div|\\cdot|[-+*/^×÷·])"
# A run of numbers, operators, brackets and spaces: where an expression can be.
_SPAN = re.compile(r"(?:\\times|\\div|\\cdot|[\d.,%+\-*/^×÷·()\[\]\s])+")
_HAS_EXPRESSION = re.compile(rf"{_NUMBER}\s*\)*\s*{_OPERATOR}\s*\(*\s*-?{_NUMBER}")


def _fill(template: str, text: str) -> str:
    # str.replace, not str.format: the text may hold braces (LaTeX, JSON).
    return template.replace("{}", text) if "{}" in template else template + text


def _clip_label(text: str, limit: int = 30) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def empty_completions() -> list[tuple[str, str]]:
    """The empty completion, whitespace only, and zero-width spaces only: no content at all."""
    return [
        ("empty", ""),
        ("whitespace only", " \n\t \n"),
        ("zero-width spaces only", ZERO_WIDTH_SPACE * 8),
    ]


def copied_prompt(prompt: str, template: str = "{}") -> list[tuple[str, str]]:
    """The prompt copied back, and its last line when the prompt has several, each put in ``template``.

    ``template`` places the copy, e.g. ``"<answer>{}</answer>"``; ``{}`` marks where it goes.
    An empty prompt gives no completions.
    """
    prompt = (prompt or "").strip()
    if not prompt:
        return []
    pairs = [("the prompt copied back", _fill(template, prompt))]
    lines = [line.strip() for line in prompt.splitlines() if line.strip()]
    if len(lines) > 1:
        pairs.append(("the prompt's last line copied back", _fill(template, lines[-1])))
    return pairs


def prompt_expressions(prompt: str) -> list[str]:
    """The arithmetic expressions written in ``prompt`` (``4 + 18``, ``7 \\times 8``, ``(9+1)``), in order."""
    found = []
    for match in _SPAN.finditer(prompt or ""):
        span = match.group().strip().rstrip(".,").strip()
        while span.count("(") > span.count(")") and span.startswith("("):
            span = span[1:].strip()
        while span.count(")") > span.count("(") and span.endswith(")"):
            span = span[:-1].strip()
        if _HAS_EXPRESSION.search(span) and span not in found:
            found.append(span)
    return found


def prompt_numbers(prompt: str, template: str = "{}", limit: int = 8, exclude=()) -> list[tuple[str, str]]:
    """The prompt's own expressions and numbers, each put in ``template``: answers copied, not computed.

    For ``What is 4 + 18?`` with ``template="<answer>{}</answer>"``: ``<answer>4 + 18</answer>``,
    ``<answer>4</answer>`` and ``<answer>18</answer>``. At most ``limit`` completions. Numbers
    in ``exclude`` (such as the gold answer: in ``What is 0 + 7?`` copying 7 is right) are left out;
    compare more loosely by filtering the result with your reward's own number comparison.
    """
    prompt = prompt or ""
    skip = {str(value).strip() for value in exclude}
    pairs = [(f"an expression from the prompt, {_clip_label(e)}", _fill(template, e)) for e in prompt_expressions(prompt)]
    numbers = [n for n in dict.fromkeys(m.group() for m in re.finditer(_NUMBER, prompt)) if n not in skip]
    pairs += [(f"a number from the prompt, {_clip_label(n)}", _fill(template, n)) for n in numbers]
    return pairs[:limit]


def placeholders(tags, fillers=("", ".", ZERO_WIDTH_SPACE, "...", "answer"), separator: str = "\n") -> list[tuple[str, str]]:
    """The expected tag structure with placeholder content: ``<reasoning>.</reasoning>\\n<answer>.</answer>``.

    ``tags`` are the element names in order, e.g. ``("reasoning", "answer")``; each filler gives
    one completion with that filler in every element (the empty one is the bare structure).
    """
    names = [tags] if isinstance(tags, str) else list(tags)
    pairs = []
    for filler in fillers:
        text = separator.join(f"<{name}>{filler}</{name}>" for name in names)
        if filler == "":
            label = "the tag structure, empty"
        elif filler.strip(ZERO_WIDTH_SPACE) == "":
            label = "the tag structure with a zero-width space in each tag"
        else:
            label = f"the tag structure with {filler!r} in each tag"
        pairs.append((label, text))
    return pairs


def padded(text: str, size: int = PADDING_SIZE) -> list[tuple[str, str]]:
    """``text`` padded to ``size`` characters with spaces, with newlines and with zero-width spaces."""
    text = text or ""
    missing = max(0, size - len(text))
    what = f"{_clip_label(text)} padded" if text else "padding"
    return [
        (f"{what} with spaces to {size:,} characters", text + " " * missing),
        (f"{what} with newlines to {size:,} characters", text + "\n" * missing),
        (f"{what} with zero-width spaces to {size:,} characters", text + ZERO_WIDTH_SPACE * missing),
    ]


def repeated(text: str, size: int = PADDING_SIZE) -> list[tuple[str, str]]:
    """``text``, its first word and its first character, each repeated to at least ``size`` characters."""
    text = text or ""
    if not text.strip():
        return []
    pairs = [(f"{_clip_label(text)} repeated to {size:,} characters", _repeat(text, size))]
    word = text.split()[0]
    if word != text:
        pairs.append((f"the word {_clip_label(word)} repeated to {size:,} characters", _repeat(word + " ", size)))
    first = text.strip()[0]
    if first != text:
        pairs.append((f"the character {first!r} repeated to {size:,} characters", first * size))
    return pairs


def _repeat(unit: str, size: int) -> str:
    return (unit * max(1, -(-size // len(unit))))[:max(size, len(unit))]


def generic_degenerate(prompt: str = "", size: int = PADDING_SIZE) -> list[tuple[str, str]]:
    """What the checks try on every reward: empty and whitespace, the prompt copied back, padding, repetition.

    ``prompt`` is the row's prompt as text (empty when the row has none); ``size`` is the padded length.
    """
    pairs = empty_completions() + copied_prompt(prompt)
    pairs.append((f"spaces to {size:,} characters", " " * size))
    pairs.append((f"one letter repeated to {size:,} characters", "a" * size))
    pairs += repeated(FILLER_SENTENCE, size)[:1]
    if (prompt or "").strip():
        pairs.append((f"the prompt repeated to {size:,} characters", _repeat(prompt.strip() + "\n", size)))
    return pairs


def padding_to(size: int) -> list[tuple[str, str]]:
    """Content-free completions exactly ``size`` characters long: spaces, one letter, a filler sentence.

    The checks use them at the lengths of real completions (the gold, drawn text), which catches a reward that
    pays length (or closeness to a target length) whatever the length is made of.
    """
    if size <= 0:
        return []
    return [
        (f"spaces to {size:,} characters (as long as a real completion)", " " * size),
        (f"one letter repeated to {size:,} characters (as long as a real completion)", "a" * size),
        (f"a filler sentence repeated to {size:,} characters (as long as a real completion)",
         _repeat(FILLER_SENTENCE, size)[:size]),
    ]
