"""Several different final answers pay nothing; the same value written more than once still pays."""

import pytest

from grpo_reward_math import math_reward

SQRT_HALF = "\\frac{\\sqrt{2}}{2}"


@pytest.mark.parametrize("completion, gold, params", [
    ("\\boxed{41} \\boxed{42}", "42", {}),
    ("$\\boxed{41}$ or $\\boxed{42}$", "42", {}),
    ("6 * 7 = \\boxed{41}. Let me recheck: 6 * 7 = 42, so \\boxed{42}.", "42", {}),
    ("\\boxed{41} \\boxed{42}", "42", {"extract": "boxed"}),
    ("\\boxed{41} \\boxed{42}", "42", {"extract": "last-number"}),
    (" ".join(f"\\boxed{{{n}}}" for n in range(20, 43)), "42", {}),  # more boxes than one list answer holds
    ("\\boxed{42.5} \\boxed{42}", "42", {"rel_tol": 0.1}),  # both within the tolerance, yet two values
    ("\\boxed{0.333333} \\boxed{\\frac{1}{3}}", "1/3", {}),  # values compared exactly, never rounded
    ("\\boxed{2} \\boxed{\\sqrt{2}}", "\\sqrt{2}", {}),
    ("\\boxed{1} then \\boxed{" + SQRT_HALF + "}", SQRT_HALF, {}),
    ("So $\\boxed{1}, \\boxed{3}$. Checking: $\\boxed{1}, \\boxed{-2}$", "\\{1, -2\\}", {}),
    ("<answer>41</answer> <answer>42</answer>", "42", {}),
    ("<answer>41</answer> <answer>42</answer>", "42", {"extract": "answer-tag"}),
    ("\\boxed{41}\n<answer>42</answer>", "42", {}),
    ("<answer>x = 25, x = 22</answer>", "22", {"allow_expressions": True}),
    ("<answer>x = 25, x = 22</answer>", "22", {"allow_expressions": False}),
    ("<answer>x = 25 or x = 22</answer>", "22", {}),
    ("<answer>$x_1 = 25$, $x_2 = 22$</answer>", "22", {}),
    ("\\boxed{x = 25, x = 22}", "22", {}),
    ("The answer is x = 25, x = 22.", "22", {}),
    ("Solving, x = 25 or x = 22.", "22", {}),
    ("Thus $x = 25$ or $x = 22$.", "22", {}),
])
def test_several_different_final_answers_pay_nothing(completion, gold, params):
    assert math_reward([completion], [gold], **params) == [0.0]


@pytest.mark.parametrize("completion, gold, params", [
    ("\\boxed{42} and so \\boxed{42}", "42", {}),
    ("\\boxed{\\frac{1}{2}}, that is \\boxed{0.5}", "0.5", {}),
    ("\\boxed{\\frac{1}{2}}, that is \\boxed{0.5}", "\\frac{1}{2}", {}),
    ("\\boxed{42} \\boxed{42}", "42", {"extract": "boxed"}),
    ("So \\boxed{42}. That is 42", "42", {"extract": "last-number"}),
    ("\\boxed{42.5} \\boxed{42.5}", "42", {"rel_tol": 0.1}),
    ("\\boxed{" + SQRT_HALF + "} \\boxed{\\frac{1}{\\sqrt{2}}}", SQRT_HALF, {}),
    ("<answer>42</answer> <answer>42</answer>", "42", {}),
    ("<answer>42</answer> <answer> 42 </answer>", "42", {"extract": "answer-tag"}),
    ("We get \\boxed{42}.\n<answer>42</answer>", "42", {}),
    ("<answer>The answer is \\boxed{42}.</answer>", "42", {}),
    ("<answer>x = 22, x = 22</answer>", "22", {}),
    ("<answer>x = 22</answer>", "22", {}),
    ("<answer>6 \\times 7 = 42</answer>", "42", {}),
    ("<answer>a = 3, b = 4, so a + b = 7</answer>", "7", {}),
    ("<answer>x = 1,234</answer>", "1234", {}),
    ("So 3 + 9 = 12.", "12", {}),
    ("Adding, a = 3 and b = 9, so a + b = 12.", "12", {}),
    # A box of work before the closing answer line is work, not a final answer.
    ("First \\boxed{200}, then the total. The final answer is $10,455$.", "10455", {}),
    ("The answer is 41. Wait, let me recheck: 6 * 7 = 42. The answer is \\boxed{42}.", "42", {}),
    # A list answer boxed item by item is one answer.
    ("\\boxed{(1,2)}, \\boxed{(2,1)}", "\\{(1,2), (2,1)\\}", {}),
    ("\\boxed{1} and \\boxed{2} and \\boxed{3}", "$${1,2,3}$$", {}),
    ("\\boxed{x = 1/2, x = 3}", "x = \\frac{1}{2}, x = 3", {}),
    ("So $\\boxed{1}, \\boxed{-2}$. Checking: \\[\\boxed{-2} \\quad \\text{and} \\quad \\boxed{1}.\\]", "\\{1, -2\\}", {}),
])
def test_one_final_answer_written_more_than_once_pays(completion, gold, params):
    assert math_reward([completion], [gold], **params) == [1.0]


def test_a_policy_boxing_two_guesses_earns_no_more_than_one_guess():
    golds = [str(n) for n in range(10, 30)]
    hedges = [f"\\boxed{{{int(g) - 1}}} \\boxed{{{g}}}" for g in golds]
    also_first = [f"\\boxed{{{g}}} \\boxed{{{int(g) + 1}}}" for g in golds]
    assert sum(math_reward(hedges + also_first, golds * 2)) == 0.0
