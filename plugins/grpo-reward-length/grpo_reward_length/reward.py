"""How ``length`` scores: the distance of the counted length from the target, through one of three shapes."""

from __future__ import annotations

import math

from grpo_core import completion_text

from grpo_reward_length.counting import counted_share, effective_length

SHAPES = ("linear", "reciprocal", "exponential")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def length_reward(completion, completion_ids=None, *, target=200, unit="chars", shape="linear", scale=None):
    """1.0 at the target length, falling with the distance |length - target| (never rising).

    ``chars`` counts the characters that count (``counting.effective_length``); ``tokens`` counts
    ``completion_ids`` scaled by the share of the text's characters that count.
    """
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


def validate_params(params: dict) -> None:
    if params["target"] < 0:
        raise ValueError(f"target must be 0 or more, got {params['target']}")
    if params["scale"] is not None and params["scale"] <= 0:
        raise ValueError(f"scale must be greater than 0, got {params['scale']}")
