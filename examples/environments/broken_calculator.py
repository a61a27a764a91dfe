"""A calculator environment with three bugs that `grpo-run check --env` finds (docs/plugin-authors.md, "Write an
environment"):

    grpo-run check --env examples/environments/broken_calculator.py:SPEC --dataset products

Its results are kept on the class, so every instance shares them; ``check`` tells the model the row's answer; and
``multiply`` raises on an argument that is not a number instead of answering it with a message. ``SPEC`` beside the
class declares its gold episode, which a class named by path alone cannot (``...py:BrokenCalculator``)."""

from fractions import Fraction

from grpo_core import EnvironmentSpec


class BrokenCalculator:
    """Exact multiplication as a tool, and a tool to check an answer."""

    results = []  # bug: a class attribute, one list for every instance and every episode

    def reset(self, **row):
        self.answer = str(row.get("answer"))  # bug: results is not reset

    def multiply(self, a: str, b: str) -> str:
        """Multiply two numbers exactly.

        Args:
            a: the first number, e.g. 964
            b: the second number

        Returns:
            The product, as a fraction when it is not whole.
        """
        product = str(Fraction(a) * Fraction(b))  # bug: Fraction('ten') raises ValueError, Fraction(None) TypeError
        self.results.append(product)
        return product

    def check(self, answer: str) -> str:
        """Check an answer before giving it.

        Args:
            answer: the answer to check

        Returns:
            Whether it is right.
        """
        return "right" if answer == self.answer else f"wrong: the answer is {self.answer}"  # bug: tells the answer

    def get_reward(self) -> float:
        """1.0 when a product equals the row's answer."""
        return 1.0 if self.answer in self.results else 0.0


def gold_episode(row):
    """Multiply the question's two numbers: 'What is 964 * 59?' -> multiply(a='964', b='59')."""
    a, b = row["operands"]
    return [("multiply", {"a": str(a), "b": str(b)})]


SPEC = EnvironmentSpec(name="broken-calculator", description="A calculator with three bugs", factory=BrokenCalculator,
                       columns=("answer",), gold_episode=gold_episode)
