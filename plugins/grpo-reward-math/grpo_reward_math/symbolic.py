"""The symbolic tier: math-verify parsing and equivalence, run in grpo_core's worker processes.

These functions are sent to ``grpo_core.run_with_timeouts``, which kills a worker that misses
its deadline, so they call math-verify with its own signal-based timeouts switched off.
Model text only reaches math-verify's LaTeX parser and its number-and-operator expression
regex; nothing here evaluates text as Python.
"""

from __future__ import annotations

import re

MAX_TEXT = 10_000  # only the end of a long completion, where the answer is, goes to math-verify
_PYTHON_OPERATOR = re.compile(r"\*\*|//")  # power and floor division as Python writes them; not LaTeX

_math_verify = None
_warm = False


def _load():
    global _math_verify
    if _math_verify is None:
        import logging

        # Timeouts are the pool's job; math-verify would otherwise warn on every call without them.
        for name in ("math_verify", "latex2sympy2_extended"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        import math_verify

        _math_verify = math_verify
    return _math_verify


def warm_up() -> bool:
    """Import math-verify and run it once, so a fresh worker's start-up does not eat an item's deadline."""
    global _warm
    if not _warm:
        mv = _load()
        mv.verify(mv.parse("$\\frac{\\sqrt{2}}{2}$"), mv.parse("$(x+1)^2 \\in (1, 2]$"), timeout_seconds=None)
        _warm = True
    return True


def _has_delimiters(text: str) -> bool:
    return "$" in text or "\\(" in text or "\\[" in text or "\\boxed" in text


def parse_expression(text: str, fallback: str = "first_match") -> list:
    """math-verify's reading of an answer (a gold answer or the content of a tag or box).

    Bare LaTeX such as ``\\sqrt{2}/2`` or ``(1, 2]`` is read as inline math first, then as plain
    text, where only a reading of the whole text counts (never a number picked out of it, which
    would read ``-[0,1)`` as ``1``). Text with Python's ``**`` or ``//``, which LaTeX does not have, is read
    only as plain text: the LaTeX parser stops at them and reads ``9**2`` as ``9``. With ``fallback="no_fallback"``
    text math-verify cannot parse gives ``[]`` rather than itself.
    """
    mv = _load()
    text = text.strip()
    if not text:
        return []
    if _has_delimiters(text):
        return mv.parse(text, fallback_mode=fallback, parsing_timeout=None)
    if not _PYTHON_OPERATOR.search(text):
        parsed = mv.parse(f"${text}$", fallback_mode=fallback, parsing_timeout=None)
        if parsed:
            return parsed
    parsed = mv.parse(text, fallback_mode="first_match", parsing_timeout=None)
    if len(parsed) == 2 and _squash(parsed[1]) == _squash(text):
        return parsed
    return [] if fallback == "no_fallback" else [text]


def _squash(text: str) -> str:
    return "".join(str(text).split()).strip("$")


def _parse_gold(gold: str) -> list:
    # What math-verify reads as math; else, for delimited LaTeX, its text (compared as text, as math-verify does).
    parsed = parse_expression(gold, fallback="no_fallback")
    if not parsed and _has_delimiters(gold):
        parsed = _load().parse(gold, parsing_timeout=None)
    return parsed


def gold_parses(gold: str) -> bool:
    """Whether math-verify can read the gold answer at all."""
    return bool(_parse_gold(gold))


def judge(gold: str, needs: tuple[tuple[tuple[str, ...], ...], ...]) -> float | None:
    """1.0 if every need holds, 0.0 if not, None if the gold answer is unreadable.

    A need holds when every answer of one of its alternatives is equivalent to the gold answer. The answers are
    already cut out of the completion: its final answer and the other final answers it writes each make a need,
    whose alternatives are the answer (with the boxes run together with it) and that run of boxes joined as one
    list. Each answer is read once.
    """
    mv = _load()
    gold_parsed = _parse_gold(gold)
    if not gold_parsed:
        return None
    verdicts: dict[str, bool] = {}

    def right(span: str) -> bool:
        if span not in verdicts:
            predicted = parse_expression(span)
            verdicts[span] = bool(predicted) and bool(mv.verify(gold_parsed, predicted, timeout_seconds=None))
        return verdicts[span]

    return 1.0 if all(any(all(map(right, option)) for option in need) for need in needs) else 0.0
