"""Reward ``repetition``: the share of a completion's n-grams that are not repeats (1.0: nothing repeated).

Degenerate GRPO policies loop ("the answer is the answer is the answer is ..."); this reward
falls as the loop grows. For a completion split into tokens (words or characters), with T
n-grams of which D are distinct, the score is D / T, and 1.0 when there are fewer than n tokens.
"""

from __future__ import annotations

from grpo_core import Direction, Param, RewardChecks, RewardSpec, hookimpl

UNITS = ("words", "chars")


def tokens(completion: str, unit: str = "words", lowercase: bool = True) -> list[str]:
    """The completion as the units n-grams are made of: whitespace-separated words, or characters."""
    if lowercase:
        completion = completion.casefold()
    return completion.split() if unit == "words" else list(completion)


def repetition(completion, *, n=3, unit="words", lowercase=True):
    """Distinct n-grams over all n-grams: 1.0 when no n-gram repeats, near 0 for a long loop."""
    units = tokens(completion, unit, lowercase)
    total = len(units) - n + 1
    if total <= 0:
        return 1.0  # too short to repeat anything
    distinct = len(set(zip(*(units[i:] for i in range(n)))))
    return distinct / total


def _validate(params):
    if params["n"] < 1:
        raise ValueError(f"n must be 1 or more, got {params['n']}")


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


def _fewer_repeats(params):
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


def _fresh_token(params):
    """A completion with one token replaced by a token used nowhere else, against the original."""
    from hypothesis import strategies as st

    unit = params["unit"]

    def replace(drawn):
        units, index = drawn
        index %= len(units)
        edited = units[:index] + [FRESH[unit]] + units[index + 1:]
        return _render(edited, unit), _render(units, unit), {}

    return st.tuples(_token_lists(params, min_size=params["n"] + 2), st.integers(0, 23)).map(replace)


def _gold(columns, params):
    if params["unit"] == "words":
        return "The quick brown fox jumps over a lazy dog."
    return "abcdefghijklmnopqrstuvwxyz" if params["lowercase"] else "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


SPEC = RewardSpec(
    name="repetition",
    description="Share of n-grams that are not repeats: 1 when nothing repeats, near 0 for a loop",
    func=repetition,
    bounds=(0.0, 1.0),
    params=(
        Param("n", 3, int, "n-gram size"),
        Param("unit", "words", str, "n-grams of whitespace-separated words, or of characters", UNITS),
        Param("lowercase", True, bool, "ignore case, so 'The' and 'the' are the same token"),
    ),
    checks=RewardChecks(
        directions=(
            Direction("of two completions with as many tokens, fewer repeated n-grams never scores lower", _fewer_repeats),
            Direction("replacing a token with one used nowhere else never lowers the score", _fresh_token),
        ),
        gold_example=_gold,
        # A penalty for loops, to add to a task reward: empty or one-word text has nothing repeated and scores 1.0
        # by design, so the checks do not hold it to paying degenerate completions less.
        degenerate_share=1.0,
    ),
    validate=_validate,
)


@hookimpl
def register_rewards(register):
    register(SPEC)
