"""The numeric fast path: reading plain numbers and comparing them without a symbolic library."""

import sys
from fractions import Fraction

import pytest

from grpo_core.answers.numbers import parse_plain_number, same_number


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
    ["", "abc", "5x", "a + 3z = 0", "5 + 3", "2,5", "1 23", "3 or 4", "8/4", "(9+1)", "7 \\times 8", "1.5/2", "\\sqrt{2}", "(1, 2]", "--5", "5/0", "1e", "e5", "$"],
)
def test_other_text_is_not_a_plain_number(text):
    assert parse_plain_number(text) is None


@pytest.mark.parametrize(
    "gold, prediction, equal",
    [
        ("1234", "1,234", True),
        ("5", "$5", True),
        ("5", "5.00", True),
        ("0.5", "50%", False),  # a percent sign is a label: 50% is 50, never also 0.5
        ("50", "50%", True),
        ("0.75", "3/4", True),
        ("-5/2", "-2.5", True),
        ("1000", "1e3", True),
        ("12", "12 apples.", True),
        ("1/3", "0.333333", False),  # exact: no rounding
        ("1.2e-7", "0", False),
        ("-3e-7", "3e-7", False),
        ("1000", "1 000", True),
        ("1000", "1\u2009000", True),
        ("1000.99", "1000,99", True),
        ("2.74", "2,74 $", True),
        ("0.111", "0,111", True),
        ("1234", "1,234", True),
        ("1.2e-7", "1.2 \\times 10^{-7}", True),
        ("5", "x = 5", True),
        ("12", "13", False),
        ("5", "-5", False),
        ("3", "2.99", False),
        ("1/2", "0.50", True),
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


def test_rel_tol_accepts_rounded_answers_only_when_asked():
    gold = parse_plain_number("3.14159")
    assert not same_number(gold, parse_plain_number("3.14"))
    assert same_number(gold, parse_plain_number("3.14"), rel_tol=1e-3)
    assert not same_number(gold, parse_plain_number("3.1"), rel_tol=1e-3)


def test_expressions_are_not_plain_numbers():
    for text in ["4 + 18", "7 * 8", "8 ÷ 4 + 45", "(9+1)", "8/4", "\\frac{8}{4}", "10^3"]:
        assert parse_plain_number(text) is None, text


# Hypothesis: exact at every magnitude from 1e-30 to 1e30, in every notation the reader accepts.
from hypothesis import given, settings, strategies as st  # noqa: E402

_DIGITS = st.integers(1, 10**12).filter(lambda n: n % 10)  # no trailing zero: a canonical mantissa
_VALUES = st.tuples(_DIGITS, st.integers(-42, 30), st.booleans())


def _value(drawn):
    digits, exponent, negative = drawn
    value = Fraction(digits) * Fraction(10) ** exponent
    return -value if negative else value


def _notations(value: Fraction) -> list[str]:
    sign = "-" if value < 0 else ""
    digits, exponent = _mantissa(abs(value))
    plain = _plain_decimal(digits, exponent)
    texts = [sign + plain, f"{sign}{digits}e{exponent}", f"{sign}{digits}E{exponent:+d}",
             f"{sign}{digits} \\times 10^{{{exponent}}}", f"${sign}{plain}$", f"\\boxed{{{sign}{plain}}}"[7:-1]]
    if exponent >= 0:
        texts.append(f"{sign}{int(abs(value)):,}")
    if value.denominator != 1 and value.denominator < 10**40:
        texts.append(f"{sign}{abs(value.numerator)}/{value.denominator}")
    return texts


def _mantissa(value: Fraction):
    exponent = 0
    while value.denominator != 1:
        value *= 10
        exponent -= 1
    digits = int(value)
    while digits and digits % 10 == 0:
        digits //= 10
        exponent += 1
    return digits, exponent


def _plain_decimal(digits: int, exponent: int) -> str:
    text = str(digits)
    if exponent >= 0:
        return text + "0" * exponent
    text = text.rjust(-exponent + 1, "0")
    return text[:exponent] + "." + text[exponent:]


@settings(max_examples=200)
@given(_VALUES)
def test_a_number_matches_itself_in_every_notation(drawn):
    value = _value(drawn)
    gold = parse_plain_number(_notations(value)[0])
    assert gold is not None and gold.value == value
    for text in _notations(value):
        number = parse_plain_number(text)
        assert number is not None and same_number(gold, number), text


@settings(max_examples=200)
@given(_VALUES, st.data())
def test_near_misses_never_match_exactly(drawn, data):
    value = _value(drawn)
    gold = parse_plain_number(_notations(value)[0])
    digits, exponent = _mantissa(abs(value))
    text = str(digits)
    position = data.draw(st.integers(0, len(text) - 1))
    changed_digit = data.draw(st.sampled_from([d for d in "0123456789" if d != text[position]]))
    changed = int(text[:position] + changed_digit + text[position + 1 :]) * Fraction(10) ** exponent
    for wrong in (-value, value * 10, value / 10, changed if value > 0 else -changed):
        for notation in _notations(wrong)[:3]:
            number = parse_plain_number(notation)
            assert number is not None and not same_number(gold, number), (value, notation)


# Texts that made the reader backtrack cubically or quadratically, or recurse once per \approx.
_HOSTILE = {
    "spaces after a sign": lambda n: "-" + " " * n + "x",
    "spaces after a currency sign": lambda n: "-$" + " " * n + "x",
    "digits before an x": lambda n: "1" * n + "x",
    "an unclosed fraction": lambda n: "\\frac{" + "1" * n + "}{",
    "dotted digits before a times": lambda n: "1" + ".1" * (n // 2) + "x 10^",
    "spaces inside a degree sign": lambda n: "5^{" + " " * n + "\\circ",
    "repeated approx": lambda n: "\\approx" * (n // 7) + "x",
}


@pytest.mark.parametrize("name", sorted(_HOSTILE))
def test_hostile_text_is_read_in_bounded_time(name):
    import time

    make = _HOSTILE[name]
    start = time.perf_counter()
    for n in (2_000, 20_000):
        parse_plain_number(make(n))
    # Linear reading takes milliseconds; the cubic reading of 2,000 characters took minutes.
    assert time.perf_counter() - start < 5.0, name


@pytest.mark.parametrize("text", ["0", "-0", "007", "-007", "1200", "-1200", "12345678901234567890", "-5"])
def test_integers_read_alike_with_and_without_the_fast_path(text):
    from grpo_core.answers.numbers import _PLAIN, _build

    assert parse_plain_number(text) == _build(_PLAIN.fullmatch(text).groupdict())
