"""Reward ``length``: how close a completion is to a target length, in characters or tokens.

Only text that shows counts: whitespace runs count once, invisible characters not at all, and
repetition once (see ``grpo_reward_length.counting``), so padding never moves a completion
closer to its target. How it scores: ``grpo_reward_length.reward``.
"""

from __future__ import annotations

from grpo_core import Param, RewardSpec, hookimpl

from grpo_reward_length.properties import CHECKS
from grpo_reward_length.reward import SHAPES, length_reward, score_distance, text_of_length, validate_params

__all__ = ["SHAPES", "SPEC", "length_reward", "register_rewards", "score_distance", "text_of_length"]

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
    checks=CHECKS,
    validate=validate_params,
)


@hookimpl
def register_rewards(register):
    register(SPEC)
