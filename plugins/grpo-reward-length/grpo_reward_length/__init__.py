"""Reward ``length``: how close a completion is to a target length, in characters or tokens."""

from __future__ import annotations

import math

from grpo_core import Direction, Param, RewardSpec, hookimpl

SHAPES = ("linear", "reciprocal", "exponential")


def length_reward(completion, completion_ids=None, *, target=200, unit="chars", shape="linear", scale=None):
    """1.0 at the target length, falling with the distance |length - target| (never rising)."""
    if unit == "tokens":
        if completion_ids is None:
            raise ValueError("unit=tokens needs completion_ids, which TRL passes during training")
        length = len(completion_ids)
    else:
        length = len(completion)
    return score_distance(abs(length - target), target, shape, scale)


def score_distance(distance: float, target: float, shape: str, scale: float | None) -> float:
    scale = scale or max(target / 4, 1.0)
    if shape == "linear":
        return max(0.0, 1.0 - distance / max(target, 1))
    if shape == "reciprocal":
        return 1.0 / (1.0 + distance / scale)
    return math.exp(-distance / scale)


def _validate(params):
    if params["target"] < 0:
        raise ValueError(f"target must be 0 or more, got {params['target']}")
    if params["scale"] is not None and params["scale"] <= 0:
        raise ValueError(f"scale must be greater than 0, got {params['scale']}")


def _closer_pairs(params):
    from hypothesis import strategies as st

    target = params["target"]
    lengths = st.integers(min_value=0, max_value=max(2 * target + 50, 60))

    def pair(lengths_pair):
        a, b = lengths_pair
        near, far = (a, b) if abs(a - target) <= abs(b - target) else (b, a)
        return "x" * near, "y" * far, {}

    return st.tuples(lengths, lengths).map(pair)


def _gold(columns, params):
    return "x" * params["target"] if params["unit"] == "chars" else None


SPEC = RewardSpec(
    name="length",
    description="Closeness to a target length: 1 at the target, lower the farther away",
    func=length_reward,
    bounds=(0.0, 1.0),
    params=(
        Param("target", 200, int, "target length"),
        Param("unit", "chars", str, "count characters, or tokens (from completion_ids)", ("chars", "tokens")),
        Param("shape", "linear", str, "how the score falls with distance", SHAPES),
        Param("scale", None, float, "distance at which reciprocal gives 0.5 (default target/4)"),
    ),
    directions=(Direction("a completion closer to the target length scores at least as high", _closer_pairs),),
    gold=_gold,
    validate=_validate,
)


@hookimpl
def register_rewards(register):
    register(SPEC)
