"""One regression case list per family of wrong verdicts the reward used to give."""

import pytest

from grpo_core import Unscored
from grpo_reward_math import math_reward


def verdict(completion, gold, **params):
    (value,) = math_reward([completion], [gold], **params)
    return None if isinstance(value, Unscored) else value


@pytest.mark.parametrize(
    "completion, gold, expected",
    [
        # tiny and huge numbers are exact, sign included
        ("<answer>0</answer>", "1.2e-7", 0.0),
        ("<answer>3e-7</answer>", "-3e-7", 0.0),
        ("<answer>-3e-7</answer>", "-3e-7", 1.0),
        ("<answer>1.2e-8</answer>", "1.2e-7", 0.0),
        ("<answer>1.2 \\times 10^{-7}</answer>", "1.2e-7", 1.0),
        ("<answer>1e-30</answer>", "1e-30", 1.0),
        ("<answer>1.000000000001e30</answer>", "1e30", 0.0),
        ("<answer>0.30</answer>", "0.3", 1.0),
        ("<answer>0.25</answer>", "1/4", 1.0),
        ("<answer>1e3</answer>", "1000", 1.0),
        # thousands separators and decimal commas
        ("<answer>1 000</answer>", "1000", 1.0),
        ("<answer>1\u2009000</answer>", "1000", 1.0),
        ("<answer>1\u202f000 000</answer>", "1000000", 1.0),
        ("<answer>1000,99</answer>", "1000.99", 1.0),
        ("<answer>2,74 $</answer>", "2.74", 1.0),
        ("<answer>1,234</answer>", "1234", 1.0),
        ("<answer>1,234</answer>", "1.234", 0.0),
        ("\\boxed{32,\\! 349}", "32349", 1.0),
        # several answers
        ("\\boxed{(1,2)}, \\boxed{(2,1)}", "\\{(1,2), (2,1)\\}", 1.0),
        ("\\boxed{(1,2)}, \\boxed{(3,1)}", "\\{(1,2), (2,1)\\}", 0.0),
        ("\\boxed{1} and \\boxed{2} and \\boxed{3}", "\\{1,2,3\\}", 1.0),
        ("\\boxed{x = 1/2, x = 3}", "x = \\frac{1}{2}, x = 3", 1.0),
        ("\\boxed{x = 1/2, x = 4}", "x = \\frac{1}{2}, x = 3", 0.0),
        ("\\boxed{1}", "-[0,1)", None),  # math-verify cannot read this gold; never a match
        ("\\boxed{1}", "[0,1)", 0.0),
        ("\\boxed{-[0,1)}", "1", 0.0),
        # the final answer, never a number from the reasoning
        ("We get 4 + 3 = 7, then 7 * 2 = 14.\nThe answer is 14.", "7", 0.0),
        ("We get 4 + 3 = 7, then 7 * 2 = 14.\nThe answer is 14.", "14", 1.0),
        ("First \\boxed{200}. Then 10,455. Final Answer: The final answer is $10,455$. I hope it is correct.", "200", 0.0),
        ("Roughly 12 of them, so 13 in the end.", "13", 0.0),
        # unreadable gold answers are unscorable, not 0.0
        ("<answer>42</answer>", "forty two", None),
        ("<answer>7</answer>", "seven", None),
        ("<answer>Evelyn</answer>", "Evelyn", None),
        ("\\boxed{\\text{Evelyn}}", "$\\text{Evelyn}$", 1.0),
    ],
)
def test_family(completion, gold, expected):
    assert verdict(completion, gold) == expected
