"""The numeric fast path: reading plain numbers and comparing them without a symbolic library."""

import sys
from fractions import Fraction

import pytest

from grpo_core.numbers import parse_plain_number, same_number


@pytest.mark.parametrize(
    "text, value",
    [
        ("42", 42),
        ("-7", -7),
        ("+7", 7),
        ("\u22127", -7),
        ("1,234", 1234),
        ("1,234,567.5", Fraction(2469135, 2)),
        ("$5", 5),
        ("-$5", -5),
        ("$-5", -5),
        ("€12.50", Fraction(25, 2)),
        ("50%", 50),
        ("3/4", Fraction(3, 4)),
        ("-3/4", Fraction(-3, 4)),
        ("-2.5", Fraction(-5, 2)),
        (".5", Fraction(1, 2)),
        ("1e3", 1000),
        ("2.5E-2", Fraction(1, 40)),
        ("12 apples.", 12),
        ("12 apples", 12),
        ("5kg", 5),
        ("90°", 90),
        ("7.", 7),
        ("  42  ", 42),
        ("$\\$5$", 5),
        ("\\frac{3}{4}", Fraction(3, 4)),
        ("-\\dfrac{1}{2}", Fraction(-1, 2)),
        ("\\frac12", Fraction(1, 2)),
        ("5\\%", 5),
        ("2.5 \\text{ cm}", Fraction(5, 2)),
        ("1{,}000", 1000),
        ("90^\\circ", 90),
    ],
)
def test_plain_numbers_are_read(text, value):
    number = parse_plain_number(text)
    assert number is not None, text
    assert number.value == value


@pytest.mark.parametrize(
    "text",
    ["", "abc", "5x", "x = 5", "5 + 3", "1,23", "1 234", "3 or 4", "\\sqrt{2}", "(1, 2]", "--5", "5/0", "1e", "e5", "$"],
)
def test_other_text_is_not_a_plain_number(text):
    assert parse_plain_number(text) is None


@pytest.mark.parametrize(
    "gold, prediction, equal",
    [
        ("1234", "1,234", True),
        ("5", "$5", True),
        ("5", "5.00", True),
        ("0.5", "50%", True),
        ("50", "50%", True),
        ("0.75", "3/4", True),
        ("-5/2", "-2.5", True),
        ("1000", "1e3", True),
        ("12", "12 apples.", True),
        ("1/3", "0.333333", True),  # a decimal matches to 6 places, as in math-verify
        ("1/3", "0.3333", False),
        ("12", "13", False),
        ("5", "-5", False),
        ("3", "2.99", False),
        ("1/2", "2/4", True),
        ("0", "-0", True),
    ],
)
def test_numbers_compare_by_value(gold, prediction, equal):
    assert same_number(parse_plain_number(gold), parse_plain_number(prediction)) is equal


def test_huge_numbers_never_become_ints():
    digits = "9" * 100_000  # far past Python's 4,300-digit int() limit
    assert len(digits) > sys.get_int_max_str_digits()
    number = parse_plain_number(digits)
    assert number is not None and number.value is None
    assert same_number(number, parse_plain_number(digits))
    assert not same_number(number, parse_plain_number("9" * 99_999 + "8"))
    assert not same_number(parse_plain_number("9"), number)


def test_huge_exponents_compare_without_arithmetic():
    big = parse_plain_number("1e999999")
    assert big is not None and big.value is None
    assert same_number(big, parse_plain_number("10e999998"))
    assert not same_number(parse_plain_number("1000"), big)
    assert parse_plain_number("1e" + "9" * 50) is None  # an exponent that long is not a number


def test_latex_form_round_trips():
    for text in ["42", "-2.5", "3/4", "1e3", "50%", "0.001"]:
        number = parse_plain_number(text)
        assert same_number(number, parse_plain_number(number.latex())), text
