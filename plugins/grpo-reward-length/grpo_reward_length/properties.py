"""What the property checks read for ``length``: closer beats farther, real text beats padding (``CHECKS``).

Only called by the checks, so hypothesis is imported inside each function.
"""

from __future__ import annotations

from grpo_core import Direction, RewardChecks

from grpo_reward_length.degenerate import degenerate
from grpo_reward_length.reward import text_of_length


def closer_pairs(params):
    from hypothesis import strategies as st

    target = params["target"]
    lengths = st.integers(min_value=0, max_value=max(2 * target + 50, 60))

    def pair(drawn):
        (a, b), seed = drawn
        near, far = (a, b) if abs(a - target) <= abs(b - target) else (b, a)
        return text_of_length(near, seed), text_of_length(far, seed + 1), {}

    return st.tuples(st.tuples(lengths, lengths), st.integers(0, 1000)).map(pair)


def padding_pairs(params):
    from hypothesis import strategies as st

    target = params["target"]
    padding = st.sampled_from([" ", "\n", "\t", "\u200b", "\u2060", "\ufeff", "\u00ad", "\u3164"])

    def pair(drawn):
        n, pad, copies, seed = drawn
        text = text_of_length(n, seed)
        padded = text + pad * max(target - n, 0) if copies == 1 else " ".join([text] * copies)
        return text_of_length(target, seed), padded, {}

    return st.tuples(st.integers(1, max(target // 2, 1)), padding, st.integers(1, 5), st.integers(0, 1000)).map(pair)


def gold(columns, params):
    return text_of_length(params["target"]) if params["unit"] == "chars" else None


CHECKS = RewardChecks(
    directions=(
        Direction("a completion closer to the target length scores at least as high", closer_pairs),
        Direction("text at the target beats shorter text padded or repeated up to it", padding_pairs, strict=True),
    ),
    gold_example=gold,
    degenerate=degenerate,
)
