"""What the property checks read for ``repetition``: fewer repeats never score lower, a fresh token never
lowers the score, and the gold completion (``CHECKS``).

Only called by the checks, so hypothesis is imported inside each function.
"""

from __future__ import annotations

from grpo_core import Direction, RewardChecks

# Drawn tokens come from a small vocabulary so that repeats are common; FRESH is never in it.
VOCABULARY = {"words": ("the", "The", "cat", "sat", "on", "mat", "42"), "chars": ("a", "b", "A", " ", "1")}
FRESH = {"words": "zebra", "chars": "#"}


def _token_lists(params, min_size=0):
    from hypothesis import strategies as st

    return st.lists(st.sampled_from(VOCABULARY[params["unit"]]), min_size=min_size, max_size=max(24, min_size))


def _render(units, unit):
    return (" " if unit == "words" else "").join(units)


def _repeats(units, params):
    """How many n-grams are repeats of an earlier one (counted independently of the reward)."""
    from collections import Counter

    if params["lowercase"]:
        units = [u.casefold() for u in units]
    n = params["n"]
    grams = Counter(tuple(units[i:i + n]) for i in range(len(units) - n + 1))
    return sum(count - 1 for count in grams.values())


def fewer_repeats(params):
    """Two completions with the same number of tokens; the one with fewer repeated n-grams is better."""
    from hypothesis import strategies as st

    unit = params["unit"]

    @st.composite
    def pair(draw):
        size = draw(st.integers(0, 24))
        a = draw(st.lists(st.sampled_from(VOCABULARY[unit]), min_size=size, max_size=size))
        b = draw(st.lists(st.sampled_from(VOCABULARY[unit]), min_size=size, max_size=size))
        better, worse = (a, b) if _repeats(a, params) <= _repeats(b, params) else (b, a)
        return _render(better, unit), _render(worse, unit), {}

    return pair()


def fresh_token(params):
    """A completion with one token replaced by a token used nowhere else, against the original."""
    from hypothesis import strategies as st

    unit = params["unit"]

    def replace(drawn):
        units, index = drawn
        index %= len(units)
        edited = units[:index] + [FRESH[unit]] + units[index + 1:]
        return _render(edited, unit), _render(units, unit), {}

    return st.tuples(_token_lists(params, min_size=params["n"] + 2), st.integers(0, 23)).map(replace)


def gold(columns, params):
    if params["unit"] == "words":
        return "The quick brown fox jumps over a lazy dog."
    return "abcdefghijklmnopqrstuvwxyz" if params["lowercase"] else "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


CHECKS = RewardChecks(
    directions=(
        Direction("of two completions with as many tokens, fewer repeated n-grams never scores lower", fewer_repeats),
        Direction("replacing a token with one used nowhere else never lowers the score", fresh_token),
    ),
    gold_example=gold,
    # A penalty for loops, to add to a task reward: empty or one-word text has nothing repeated and scores 1.0
    # by design, so the checks do not hold it to paying degenerate completions less.
    degenerate_share=1.0,
)
