"""The classic wrong-sign reward, caught before training by grpo-core's property checks.

    python examples/wrong_sign_reward.py

``abs(20 - len(completion))`` grows as the completion moves away from 20 characters, so GRPO
would push completions away from the target. The direction the reward declares ("closer to
20 characters scores at least as high") fails, with the smallest counterexample hypothesis finds.
"""

import sys

from grpo_core import Direction, RewardChecks, RewardSpec
from grpo_core.testing import check_reward


def closeness(completion):
    return abs(20 - len(completion))  # the bug: a distance, not a closeness


def closer_pairs(params):
    from hypothesis import strategies as st

    from grpo_core.testing import ranked_pairs

    return ranked_pairs(st.integers(0, 60), rank=lambda n: -abs(20 - n), render=lambda n: "x" * n)


SPEC = RewardSpec(
    name="closeness",
    description="Closeness to 20 characters (with the sign wrong)",
    func=closeness,
    bounds=(0.0, 1e6),
    checks=RewardChecks(
        directions=(Direction("closer to 20 characters scores at least as high", closer_pairs),),
    ),
)

if __name__ == "__main__":
    try:
        check_reward(SPEC, max_examples=20, seed=0)
    except AssertionError as failure:
        print(failure)
        sys.exit(1)
