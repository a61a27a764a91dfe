"""grpo-core's math and xml-format rewards as a verl custom reward function.

    python3 -m verl.trainer.main_ppo ... \\
        custom_reward_function.path=examples/verl_reward.py custom_reward_function.name=compute_score

verl calls ``compute_score(data_source, solution_str, ground_truth, extra_info=None)`` once per response, with
the decoded response and the row's ``reward_model.ground_truth``. The rewards are loaded once, when verl imports
this file; math's checks (exact numbers, LaTeX through math-verify, a time limit per answer) run as they do
under grpo-run. verl needs a number: a response math cannot score (the gold answer is unreadable) adds nothing,
and ``score_details`` says why.
"""

import grpo_core

WEIGHTS = {"math": 1.0, "xml-format": 0.2}
REWARDS = grpo_core.load_rewards(list(WEIGHTS), weights=WEIGHTS)


def score_details(solution_str: str, ground_truth: str) -> dict:
    """Each reward's score of one response (None: not scored) and why it was not scored."""
    details = {}
    for reward in REWARDS:
        scores, reasons = reward.score_with_reasons(completions=[solution_str], answer=[str(ground_truth)])
        details[reward.__name__] = scores[0]
        if reasons[0]:
            details[f"{reward.__name__}/unscored"] = reasons[0]
    return details


def compute_score(data_source, solution_str, ground_truth, extra_info=None) -> float:
    """The weighted sum of the rewards for one response, as verl's reward manager calls it."""
    details = score_details(solution_str, ground_truth)
    return sum(reward.weight * details[reward.__name__] for reward in REWARDS if details[reward.__name__] is not None)


if __name__ == "__main__":
    for response, gold in [("<reasoning>7 times 6</reasoning><answer>42</answer>", "42"),
                           ("The answer is \\boxed{\\frac{84}{2}}", "42"),
                           ("<answer>41</answer>", "42"),
                           ("#### 42", "forty-two")]:
        print(f"{response!r:55} gold {gold!r:12} -> {compute_score('gsm8k', response, gold):.3f} "
              f"{score_details(response, gold)}")
