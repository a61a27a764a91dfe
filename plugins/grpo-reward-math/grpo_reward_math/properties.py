"""What the property checks read for ``math``: gold answers, right-versus-wrong pairs, gold completions (``CHECKS``).

Only called by the checks, so hypothesis is imported inside each function.
"""

from __future__ import annotations

from grpo_core import Direction, RewardChecks

from grpo_reward_math.degenerate import degenerate, format_answer

# (gold, an equivalent way to write it, a different value) for answers only math-verify can judge.
SYMBOLIC_CASES = (
    ("\\frac{1}{2}", "0.5", "\\frac{1}{3}"),
    ("\\frac{\\sqrt{2}}{2}", "\\sqrt{2}/2", "\\sqrt{2}"),
    ("(1, 2]", "(1,2]", "[1, 2]"),
    ("\\{1, 2, 3\\}", "\\{3, 2, 1\\}", "\\{1, 2\\}"),
    ("x^2 + 2x + 1", "(x+1)^2", "(x-1)^2"),
    ("\\pi", "\\pi", "3"),
    ("2\\sqrt{3}", "\\sqrt{12}", "3\\sqrt{2}"),
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 2 \\\\ 1 \\end{pmatrix}"),
)

# Reasoning text around an answer: letters and punctuation only, so it holds no number, tag or LaTeX.
_FILLER_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ,.!?'\n"


def _plain_answers():
    """Gold answers in the plain forms the fast path reads, paired with the value they stand for."""
    from fractions import Fraction

    from hypothesis import strategies as st

    integers = st.integers(min_value=-(10**12), max_value=10**12)
    plain = integers.map(lambda n: (str(n), Fraction(n)))
    grouped = st.integers(min_value=1000, max_value=10**9).map(lambda n: (f"{n:,}", Fraction(n)))
    decimals = st.tuples(integers, st.integers(1, 3)).map(
        lambda t: (_decimal_text(t[0], t[1]), Fraction(t[0], 10 ** t[1]))
    )
    from math import gcd

    fractions = (
        st.tuples(st.integers(-99, 99), st.integers(2, 99))
        .filter(lambda t: t[0] != 0 and gcd(t[0], t[1]) == 1)  # only a fraction in lowest terms is a number
        .map(lambda t: (f"{t[0]}/{t[1]}", Fraction(t[0], t[1])))
    )
    money = st.integers(0, 10**6).map(lambda n: (f"${n}", Fraction(n)))
    return st.one_of(plain, grouped, decimals, fractions, money)


def _decimal_text(units: int, places: int) -> str:
    sign = "-" if units < 0 else ""
    digits = str(abs(units)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


def rows(params: dict):
    """Valid rows for ``math``: ``{"answer": gold}`` with plain numbers and LaTeX answers."""
    from hypothesis import strategies as st

    symbolic = st.sampled_from([case[0] for case in SYMBOLIC_CASES])
    return st.one_of(_plain_answers().map(lambda pair: pair[0]), symbolic).map(lambda gold: {"answer": gold})


def gold(columns: dict, params: dict) -> str | None:
    """A completion stating the gold answer where the reward reads it."""
    from grpo_reward_math.reward import read_gold

    answer = columns.get("answer")
    parsed = read_gold(answer)
    if parsed is None:
        return None
    if params.get("extract") == "last-number":
        # Only a number can be the last number; a LaTeX answer has no such form.
        return format_answer(parsed.plain(), params) if not isinstance(parsed, str) else None
    text = str(answer).strip()
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip()
    return format_answer(text, params)


def _cases(params: dict):
    """(gold, a right answer, a wrong answer) as strings; plain numbers only under ``last-number``."""
    from hypothesis import strategies as st

    def plain_case(draw_pair):
        (gold_text, value), offset = draw_pair
        wrong = value + offset
        wrong_text = str(wrong.numerator) if wrong.denominator == 1 else f"{wrong.numerator}/{wrong.denominator}"
        return gold_text, gold_text, wrong_text

    nonzero = st.integers(-50, 50).filter(lambda n: n != 0)
    plain = st.tuples(_plain_answers(), nonzero).map(plain_case)
    if params.get("extract") == "last-number":
        return plain
    return st.one_of(plain, plain, st.sampled_from(SYMBOLIC_CASES))


def right_beats_wrong(params: dict):
    """Pairs (right answer, wrong answer) in the reward's format, after the same reasoning text."""
    from hypothesis import strategies as st

    def pair(drawn):
        (gold_text, right, wrong), filler, use_equivalent = drawn
        right_text = right if use_equivalent else gold_text
        return (
            f"{filler}\n{format_answer(right_text, params)}",
            f"{filler}\n{format_answer(wrong, params)}",
            {"answer": gold_text},
        )

    filler = st.text(alphabet=_FILLER_ALPHABET, max_size=80)
    return st.tuples(_cases(params), filler, st.booleans()).map(pair)


def right_beats_absent(params: dict):
    """Pairs (right answer, no answer at all): the same reasoning text, with and without the answer."""
    from hypothesis import strategies as st

    def pair(drawn):
        (gold_text, right, _), filler = drawn
        return f"{filler}\n{format_answer(right, params)}", filler, {"answer": gold_text}

    filler = st.text(alphabet=_FILLER_ALPHABET, max_size=80)
    return st.tuples(_cases(params), filler).map(pair)


def row_problems(columns: dict, params: dict) -> list[tuple[str, str]]:
    """A gold answer that cannot be read (empty, or words such as 'forty two') makes a row unfit."""
    from grpo_reward_math.reward import gold_problem

    raw = columns.get("answer")
    if gold_problem(raw) is None:
        return []
    return [("gold answer cannot be read", "" if raw is None else str(raw)[:80])]


CHECKS = RewardChecks(
    directions=(
        Direction("the right answer scores higher than a wrong one", right_beats_wrong, strict=True),
        Direction("the right answer scores higher than no answer", right_beats_absent, strict=True),
    ),
    column_strategy=rows,
    gold_example=gold,
    degenerate=degenerate,
    row_problems=row_problems,
)
