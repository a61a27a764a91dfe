"""Reading what a row and a completion hold: the program (the last fenced block) and the tests.

Tests are a list of assert statements run after the program, or a list of ``{"input", "output"}`` pairs
(the program reads standard input); the JSON text of either list is read too. An assert of the form
``assert EXPRESSION == LITERAL`` (or ``LITERAL == EXPRESSION``) is a *value test*: only the expression goes
into the sandbox, and its value comes back to be compared here, so the program never sees the expected
value. Any other assert runs in the sandbox as it is.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+.#-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.DOTALL | re.MULTILINE)
_ALIASES = {"python": ("python", "py", "python3")}
MAX_PROGRAM = 100_000  # characters; a longer block is no program
MAX_TESTS = 200


def extract_program(text: str, language: str = "python", tag: str = "") -> str | None:
    """The last fenced code block in ``language`` (``python`` also takes ``py`` and ``python3``), else None.

    With ``tag`` only the last ``<tag>...</tag>`` is searched, and its content is the program when it holds no
    fenced block. ``language=""`` takes the last fenced block whatever its language.
    """
    if tag:
        close = text.rfind(f"</{tag}>")
        start = text.rfind(f"<{tag}>", 0, close) if close >= 0 else -1
        if start < 0:
            return None
        text = text[start + len(tag) + 2 : close]
        if "```" not in text and "~~~" not in text:
            return _usable(text)
    wanted = _ALIASES.get(language.lower(), (language.lower(),)) if language else None
    found = None
    for match in _FENCE.finditer(text):
        if wanted is None or match.group(2).lower() in wanted:
            found = match.group(3)
    return _usable(found)


def _usable(program: str | None) -> str | None:
    if program is None or not program.strip() or len(program) > MAX_PROGRAM:
        return None
    return program


@dataclass(frozen=True)
class Tests:
    """A row's tests: ``mode`` "assert" (``items`` are test dicts for the worker, ``expected`` the values kept
    here for value tests, None for the others) or "io" (``items`` are inputs, ``expected`` the outputs)."""

    mode: str
    items: tuple
    expected: tuple


def read_tests(raw) -> Tests | None:
    """The tests in ``raw`` (a list, or its JSON text); None when there are none or they cannot be read."""
    if raw is None:
        return None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    if isinstance(raw, tuple):
        raw = list(raw)
    if not isinstance(raw, list) or not raw or len(raw) > MAX_TESTS:
        return None
    if all(isinstance(item, dict) and "input" in item and "output" in item for item in raw):
        return Tests("io", tuple(_as_text(i["input"]) for i in raw), tuple(_as_text(i["output"]) for i in raw))
    if all(isinstance(item, str) and item.strip() for item in raw):
        planned = [plan_assert(item) for item in raw]
        if any(p is None for p in planned):
            return None
        return Tests("assert", tuple(p[0] for p in planned), tuple(p[1] for p in planned))
    return None


def _as_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value)


_NO_VALUE = None


def plan_assert(statement: str):
    """``(test for the worker, expected value or None)``; None when the text is not Python."""
    try:
        module = ast.parse(statement)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not module.body:
        return None
    *setup, last = module.body
    setup_text = "\n".join(ast.unparse(node) for node in setup) if setup else ""
    if isinstance(last, ast.Assert) and isinstance(last.test, ast.Compare) and len(last.test.ops) == 1 \
            and isinstance(last.test.ops[0], ast.Eq):
        left, right = last.test.left, last.test.comparators[0]
        for expression, literal in ((left, right), (right, left)):
            try:
                expected = ast.literal_eval(literal)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                continue
            return {"kind": "value", "setup": setup_text, "expression": ast.unparse(expression)}, (expected,)
    return {"kind": "assert", "setup": "", "statement": statement}, _NO_VALUE


def same_value(text: str, expected) -> bool:
    """Whether the value the program computed (its ``repr``, read back as a literal) equals the expected one."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False
    try:
        return bool(value == expected)
    except Exception:
        return False


def same_output(got: str, expected: str) -> bool:
    """Outputs compared line by line after removing trailing whitespace (and trailing blank lines)."""
    def normal(text: str) -> list[str]:
        return [line.rstrip() for line in text.rstrip().splitlines()]

    return normal(got) == normal(expected)
