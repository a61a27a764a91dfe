"""Reward ``length``: how close a completion is to a target length, in characters or tokens.

Only text that shows counts: whitespace runs count once, invisible characters not at all, and
repetition once (see ``grpo_reward_length.counting``), so padding never moves a completion
closer to its target.
"""

from __future__ import annotations

import math

from grpo_core import Direction, Param, RewardChecks, RewardSpec, completion_text, hookimpl

SHAPES = ("linear", "reciprocal", "exponential")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def length_reward(completion, completion_ids=None, *, target=200, unit="chars", shape="linear", scale=None):
    """1.0 at the target length, falling with the distance |length - target| (never rising).

    ``chars`` counts the characters that count (``counting.effective_length``); ``tokens`` counts
    ``completion_ids`` scaled by the share of the text's characters that count.
    """
    from grpo_reward_length.counting import counted_share, effective_length

    text = completion if isinstance(completion, str) else completion_text(completion)
    if unit == "tokens":
        if completion_ids is None:
            raise ValueError("unit=tokens needs completion_ids, which TRL passes during training")
        length = round(len(completion_ids) * counted_share(text))
    else:
        length = effective_length(text)
    return score_distance(abs(length - target), target, shape, scale)


def score_distance(distance: float, target: float, shape: str, scale: float | None) -> float:
    scale = scale or max(target / 4, 1.0)
    if shape == "linear":
        return max(0.0, 1.0 - distance / max(target, 1))
    if shape == "reciprocal":
        return 1.0 / (1.0 + distance / scale)
    return math.exp(-distance / scale)


def text_of_length(n: int, seed: int = 0) -> str:
    """Text whose length counts as exactly ``n`` characters: made-up words, nothing repeated, no sentence end."""
    state, chars = seed * 7919 + 12345, []
    while len(chars) < n:
        state = (state * 1103515245 + 12345) % 2**31
        # A space now and then (never first, last or doubled) makes words; the rest are letters.
        space = chars and chars[-1] != " " and len(chars) < n - 1 and state % 7 == 0
        chars.append(" " if space else _LETTERS[(state >> 8) % 26])
    return "".join(chars)


def _validate(params):
    if params["target"] < 0:
        raise ValueError(f"target must be 0 or more, got {params['target']}")
    if params["scale"] is not None and params["scale"] <= 0:
        raise ValueError(f"scale must be greater than 0, got {params['scale']}")


def _closer_pairs(params):
    from hypothesis import strategies as st

    target = params["target"]
    lengths = st.integers(min_value=0, max_value=max(2 * target + 50, 60))

    def pair(drawn):
        (a, b), seed = drawn
        near, far = (a, b) if abs(a - target) <= abs(b - target) else (b, a)
        return text_of_length(near, seed), text_of_length(far, seed + 1), {}

    return st.tuples(st.tuples(lengths, lengths), st.integers(0, 1000)).map(pair)


def _padding_pairs(params):
    from hypothesis import strategies as st

    target = params["target"]
    padding = st.sampled_from([" ", "\n", "\t", "\u200b", "\u2060", "\ufeff", "\u00ad", "\u3164"])

    def pair(drawn):
        n, pad, copies, seed = drawn
        text = text_of_length(n, seed)
        padded = text + pad * max(target - n, 0) if copies == 1 else " ".join([text] * copies)
        return text_of_length(target, seed), padded, {}

    return st.tuples(st.integers(1, max(target // 2, 1)), padding, st.integers(1, 5), st.integers(0, 1000)).map(pair)


def _gold(columns, params):
    return text_of_length(params["target"]) if params["unit"] == "chars" else None


def _degenerate(prompt, columns, params):
    from grpo_reward_length.degenerate import degenerate_completions

    return degenerate_completions(prompt, params)


SPEC = RewardSpec(
    name="length",
    description="Closeness to a target length of visible, non-repeated text: 1 at the target, lower the farther away",
    func=length_reward,
    bounds=(0.0, 1.0),
    params=(
        Param("target", 200, int, "target length"),
        Param("unit", "chars", str, "count characters, or tokens (from completion_ids, scaled by the share of "
              "characters that count)", ("chars", "tokens")),
        Param("shape", "linear", str, "how the score falls with distance", SHAPES),
        Param("scale", None, float, "distance at which reciprocal gives 0.5 (default target/4)"),
    ),
    checks=RewardChecks(
        directions=(
            Direction("a completion closer to the target length scores at least as high", _closer_pairs),
            Direction("text at the target beats shorter text padded or repeated up to it", _padding_pairs, strict=True),
        ),
        gold_example=_gold,
        degenerate=_degenerate,
    ),
    validate=_validate,
)


@hookimpl
def register_rewards(register):
    register(SPEC)
