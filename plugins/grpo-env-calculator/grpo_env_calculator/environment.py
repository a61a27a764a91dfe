"""The ``calculator`` environment: exact arithmetic tools for one episode, and its reward, paid when a tool call's
result is the row's answer. ``gold_episode`` gives the calls of a right episode on a ``products`` row.

A tool never raises: any argument it cannot read (None, a list, nan, ``1e999``, a thousand digits, text) is
answered with an ``error: ...`` message the model reads, and so is a division by zero or a call past the budget.
"""

from __future__ import annotations

import re
from fractions import Fraction

NUMBER = re.compile(r"-?\d+(?:\.\d+|/\d+)?", re.ASCII)  # 12, -4.5, 3/4: what a tool reads, and all it reads
MAX_CHARS = 60  # a number written longer is refused: a result stays quick to compute and to print
MAX_GOLD_CHARS = 1000  # the row's answer may be longer than a tool's argument (a product of two long numbers)
HOW_TO_WRITE = (f"write a whole number, a decimal or a fraction of at most {MAX_CHARS} characters, "
                "such as 12, -4.5 or 3/4")


class Calculator:
    """Exact arithmetic on whole numbers, decimals and fractions, as tools; paid when a call gives the answer."""

    def __init__(self, max_calls: int = 8):
        self.max_calls = max_calls
        self.answer, self.calls, self.results = None, 0, []

    def reset(self, **row) -> None:
        """Start an episode: the row's answer is kept for the reward, never shown to the model."""
        self.answer, self.calls, self.results = exact(row.get("answer"), MAX_GOLD_CHARS), 0, []

    def add(self, a: str, b: str) -> str:
        """Add two numbers exactly.

        Args:
            a: the first number, e.g. 123, -4.5 or 3/4
            b: the second number

        Returns:
            The sum: a whole number, or a fraction such as 7/4 when it is not whole.
        """
        return self._use(lambda: number(a) + number(b))

    def subtract(self, a: str, b: str) -> str:
        """Subtract the second number from the first, exactly.

        Args:
            a: the number to subtract from, e.g. 123, -4.5 or 3/4
            b: the number to subtract

        Returns:
            The difference a - b: a whole number, or a fraction such as 7/4 when it is not whole.
        """
        return self._use(lambda: number(a) - number(b))

    def multiply(self, a: str, b: str) -> str:
        """Multiply two numbers exactly.

        Args:
            a: the first number, e.g. 123, -4.5 or 3/4
            b: the second number

        Returns:
            The product: a whole number, or a fraction such as 7/4 when it is not whole.
        """
        return self._use(lambda: number(a) * number(b))

    def divide(self, a: str, b: str) -> str:
        """Divide the first number by the second, exactly.

        Args:
            a: the dividend, e.g. 123, -4.5 or 3/4
            b: the divisor, not zero

        Returns:
            The quotient a / b: a whole number, or a fraction such as 7/4 when it is not whole.
        """
        return self._use(lambda: _quotient(number(a), number(b)))

    def get_reward(self) -> float | None:
        """1.0 when a tool call's result equals the row's answer exactly, else 0.0; None (unscored) when the row
        has no answer a number can be read from."""
        if self.answer is None:
            return None
        return 1.0 if any(result == self.answer for result in self.results) else 0.0

    def _use(self, compute) -> str:
        self.calls += 1
        if self.calls > self.max_calls:
            return f"error: no calls left in this episode (it allows {self.max_calls}); give your answer"
        try:
            result = compute()
        except (ValueError, ArithmeticError) as error:
            return f"error: {error}"
        self.results.append(result)
        return str(result)  # Fraction prints 56876 when whole, 7/4 when not


def _quotient(a: Fraction, b: Fraction) -> Fraction:
    if b == 0:
        raise ZeroDivisionError("division by zero; the divisor must not be 0")
    return a / b


def exact(value, max_chars: int = MAX_CHARS) -> Fraction | None:
    """``value`` as an exact number, or None: a whole number (int), or text of at most ``max_chars`` characters
    such as 123, -4.5 or 3/4 (a float is read as the decimal it prints as). Anything else is None: a bool,
    None, a list, nan, infinity, 1e999999999, a zero denominator, or text longer than ``max_chars``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    if isinstance(value, int) and value.bit_length() > 4 * max_chars:  # str() of a huge int is slow, or raises
        return None
    text = str(value).strip()
    if len(text) > max_chars or not NUMBER.fullmatch(text):
        return None
    try:
        return Fraction(text)
    except ZeroDivisionError:  # 3/0
        return None


def number(value) -> Fraction:
    """A tool's argument as an exact number; a ValueError, which the tool answers as a message, when it is none."""
    found = exact(value)
    if found is None:
        raise ValueError(f"not a number: {_shown(value)}; {HOW_TO_WRITE}")
    return found


def _shown(value) -> str:
    """``value`` for an error message, short whatever it is (a 1 MB text, escapes, a 5000-digit integer)."""
    if isinstance(value, str):
        written = repr(value[:40])
        return written if len(written) <= 50 and len(value) <= 40 else written[:50] + "..."
    if isinstance(value, int) and not isinstance(value, bool):
        return f"a whole number of more than {MAX_CHARS} digits"
    if value is None or isinstance(value, (bool, float)):
        return repr(value)  # None, True, nan, inf, 1e+300
    return f"a {type(value).__name__}"  # a list, a dict


def gold_episode(row: dict) -> list[tuple[str, dict]]:
    """The calls of a right episode on a ``products`` row: multiply its two ``operands``. A row without that
    column (a file of questions such as 'What is 964 * 59?') multiplies the first two numbers of its question."""
    operands = row.get("operands")
    if not operands:
        prompt = row.get("prompt")
        question = prompt if isinstance(prompt, str) else next(
            (m.get("content", "") for m in reversed(prompt or []) if m.get("role") == "user"), "")
        operands = NUMBER.findall(str(question))[:2]
    a, b = (str(value) for value in operands[:2])
    return [("multiply", {"a": a, "b": b})]
