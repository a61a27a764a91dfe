"""The calculator's tools compute exactly, answer anything else with a message, and pay only a right result."""

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grpo_core.testing import HOSTILE_TEXTS, json_values

from grpo_env_calculator import Calculator

TOOLS = ("add", "subtract", "multiply", "divide")


def episode(answer="56876", **params) -> Calculator:
    calculator = Calculator(**params)
    calculator.reset(prompt=[{"role": "user", "content": "What is 964 × 59?"}], answer=answer)
    return calculator


@pytest.mark.parametrize("tool, a, b, shown", [
    ("multiply", "964", "59", "56876"),
    ("multiply", 964, 59, "56876"),  # numbers as JSON numbers, not text
    ("multiply", "123456789012345678901234567890", "987654321098765432109876543210",
     str(123456789012345678901234567890 * 987654321098765432109876543210)),
    ("add", "0.1", "0.2", "3/10"),  # no binary floating point: 0.1 + 0.2 is exactly 3/10
    ("add", 0.1, 0.2, "3/10"),
    ("add", "1/3", "2/3", "1"),  # whole results are shown as whole numbers
    ("subtract", "3/4", "1", "-1/4"),
    ("subtract", " 10 ", "-2.5", "25/2"),
    ("divide", "1", "3", "1/3"),
    ("divide", "-4.5", "1.5", "-3"),
    ("multiply", "2/4", "2", "1"),
])
def test_results_are_exact(tool, a, b, shown):
    assert getattr(episode(), tool)(a=a, b=b) == shown


@pytest.mark.parametrize("a, b, says", [
    ("1", "0", "division by zero"),
    ("1", "0/5", "division by zero"),
    ("1", "3/0", "not a number"),
    ("ten", "2", "not a number: 'ten'"),
    ("1e5", "2", "not a number"),
    ("1,000", "2", "not a number"),
    ("1.5/2", "2", "not a number"),
    ("9" * 61, "2", "at most 60 characters"),
    ("  " + "9" * 61, "2", "at most 60 characters"),  # read whole, never cut to a shorter number
    ("١٢٣", "2", "not a number"),  # digits of other scripts: ASCII digits only
])
def test_bad_input_is_answered_with_a_message(a, b, says):
    answer = episode().divide(a=a, b=b)
    assert answer.startswith("error: ") and says in answer


HOSTILE = [None, True, False, [], {}, [1, 2], {"a": 1}, math.nan, math.inf, -math.inf, 1e308, 10 ** 5000,
           -10 ** 100, "", " ", "1" * 1_000_000, "1e999999999", "nan", "Infinity", "0x10", "½", "١٢٣", "+1", "-",
           "1/", "/2", "\x00", *(text for _, text in HOSTILE_TEXTS)]


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("value", HOSTILE, ids=[f"{i}-{type(value).__name__}" for i, value in enumerate(HOSTILE)])
def test_hostile_arguments_are_answered_never_raised(tool, value):
    calculator = episode()
    for a, b in ((value, "2"), ("2", value), (value, value)):
        answer = getattr(calculator, tool)(a=a, b=b)
        assert isinstance(answer, str) and len(answer) < 200
    assert calculator.get_reward() == 0.0


@settings(max_examples=200)
@given(st.sampled_from(TOOLS), json_values(), json_values())
def test_any_json_arguments_give_text(tool, a, b):
    answer = getattr(episode(), tool)(a=a, b=b)
    assert isinstance(answer, str)


@settings(max_examples=200)
@given(st.fractions(), st.fractions().filter(bool))
def test_every_tool_agrees_with_fractions(a, b):
    calculator = episode()
    for tool, expected in zip(TOOLS, (a + b, a - b, a * b, a / b)):
        assert Fraction(getattr(calculator, tool)(a=str(a), b=str(b))) == expected


def test_paid_only_for_a_result_equal_to_the_answer():
    assert episode().get_reward() == 0.0  # no call
    calculator = episode()
    calculator.multiply(a="964", b="58")
    calculator.add(a="964", b="59")
    assert calculator.get_reward() == 0.0
    calculator.multiply(a="59", b="964")
    assert calculator.get_reward() == 1.0
    calculator = episode(answer="7/4")
    calculator.divide(a="3.5", b="2")  # compared as numbers: 1.75 is 7/4
    assert calculator.get_reward() == 1.0
    calculator = episode(answer="1.75")
    calculator.add(a="1", b="3/4")
    assert calculator.get_reward() == 1.0


def test_copying_the_question_earns_nothing():
    calculator = episode()
    for tool in TOOLS:
        assert getattr(calculator, tool)(a="What is 964 × 59?", b="What is 964 × 59?").startswith("error: ")
    assert calculator.get_reward() == 0.0


def test_a_row_without_a_readable_answer_is_unscored():
    for answer in (None, "", "about fifty thousand", "1e6"):
        calculator = episode(answer=answer)
        calculator.multiply(a="964", b="59")
        assert calculator.get_reward() is None


def test_calls_past_the_budget_are_refused_and_not_paid():
    calculator = episode(max_calls=2)
    calculator.add(a="1", b="1")
    calculator.add(a="1", b="2")
    assert calculator.multiply(a="964", b="59").startswith("error: no calls left")
    assert calculator.get_reward() == 0.0


def test_reset_forgets_the_episode_before():
    calculator = episode(max_calls=1)
    calculator.multiply(a="964", b="59")
    assert calculator.get_reward() == 1.0
    calculator.reset(answer="6063")
    assert calculator.get_reward() == 0.0
    assert calculator.multiply(a="141", b="43") == "6063" and calculator.get_reward() == 1.0
