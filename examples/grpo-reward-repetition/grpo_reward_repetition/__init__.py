"""Reward ``repetition``: the share of a completion's n-grams that are not repeats (1.0: nothing repeated).

Degenerate GRPO policies loop ("the answer is the answer is the answer is ..."); this reward
falls as the loop grows. For a completion split into tokens (words or characters), with T
n-grams of which D are distinct, the score is D / T, and 1.0 when there are fewer than n tokens.
"""

from __future__ import annotations

from grpo_core import Param, RewardSpec, hookimpl

from grpo_reward_repetition.properties import CHECKS
from grpo_reward_repetition.reward import UNITS, repetition, tokens, validate_params

__all__ = ["SPEC", "UNITS", "register_rewards", "repetition", "tokens"]

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
    checks=CHECKS,
    validate=validate_params,
)


@hookimpl
def register_rewards(register):
    register(SPEC)
