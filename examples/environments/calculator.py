"""A plain TRL environment class: GRPOTrainer(environment_factory=Calculator) takes it as it is, and so does
grpo-run --env examples/environments/calculator.py:Calculator."""

import re
from fractions import Fraction

NUMBER = re.compile(r"-?\d+(\.\d+)?(/\d+)?")
MAX_CHARS = 60  # a number written longer is refused: the product of two stays quick to compute and to print


class Calculator:
    """Exact arithmetic on whole numbers and fractions, as tools."""

    def __init__(self, max_calls: int = 8):
        self.max_calls = max_calls

    def reset(self, **row):
        """Start an episode: the row's gold answer is kept for the reward, never shown to the model."""
        self.answer, self.calls, self.results = row.get("answer"), 0, []

    def multiply(self, a: str, b: str) -> str:
        """Multiply two numbers exactly.

        Args:
            a: the first number, e.g. 123 or 3/4
            b: the second number

        Returns:
            The product, as a fraction when it is not whole.
        """
        return self._use(lambda: _number(a) * _number(b))

    def add(self, a: str, b: str) -> str:
        """Add two numbers exactly.

        Args:
            a: the first number, e.g. 123 or 3/4
            b: the second number

        Returns:
            The sum, as a fraction when it is not whole.
        """
        return self._use(lambda: _number(a) + _number(b))

    def _use(self, compute) -> str:
        self.calls += 1
        if self.calls > self.max_calls:
            return "error: no calls left in this episode"
        try:
            result = compute()
        except (ValueError, ZeroDivisionError) as error:
            return f"error: {error}"
        self.results.append(result)
        return str(result)

    def get_reward(self) -> float:
        """1 when a tool call gave the gold answer, else 0: the episode is paid for using the tool right."""
        return float(self.answer is not None and any(str(r) == str(self.answer) for r in self.results))


def _number(value) -> Fraction:
    """``value`` as an exact number: a whole number, or text such as 123, -4.5 or 3/4; anything else (None, a list,
    nan, 1e999999999, a thousand digits) is a ValueError, which the tool answers as an error message."""
    text = str(value).strip() if isinstance(value, (int, float, str)) and not isinstance(value, bool) else ""
    if len(text) > MAX_CHARS or not NUMBER.fullmatch(text):
        raise ValueError(f"not a number: {str(value)[:MAX_CHARS]!r}; write a whole number, a decimal or a fraction")
    return Fraction(text)
