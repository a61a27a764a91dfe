"""Finding the answer in a completion."""

import pytest

from grpo_core import parse_number, same_number

from grpo_reward_math.extract import last_boxed, last_number, prose_number


def test_last_boxed_matches_braces():
    assert last_boxed("\\boxed{1} and \\boxed{\\frac{1}{2}}") == "\\frac{1}{2}"
    assert last_boxed("$\\boxed{\\{1, 2\\}}$") == "\\{1, 2\\}"
    assert last_boxed("\\boxed 5$") == "5"
    assert last_boxed("\\fbox{3}") == "3"
    assert last_boxed("\\boxed{2} then \\boxed{unclosed") == "2"
    assert last_boxed("\\boxedx{3}") is None
    assert last_boxed("no box") is None
    assert last_boxed("\\boxed{" * 10_000) is None


@pytest.mark.parametrize(
    "text, value",
    [
        ("So she has 18 eggs left.", "18"),
        ("5 + 7 = 12", "12"),
        ("The answer is 42. Check: 6 x 7 = 42 and 40 + 2", "42"),
        ("Answer: $1,234 in total, from 3 days", "1234"),
        ("She earned 5 then 10.\n#### 15\nDone in 2 steps", "15"),
        ("It costs -3 degrees", "-3"),
        ("5-3 is 2", "2"),
        ("three quarters is 3/4", "3/4"),
        ("That is 50%.", "50%"),
    ],
)
def test_prose_answers(text, value):
    number = prose_number(text)
    assert number is not None and same_number(parse_number(value), number), text


def test_numbers_glued_to_words_are_not_read():
    assert last_number("version v2 of CO2") is None
    assert last_number("no digits here") is None
