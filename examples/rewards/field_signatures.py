"""One right-answer reward written three ways, as verl, OpenRLHF and verifiers expect it; grpo-run reads each from its
signature and calls it as TRL calls a reward:

    grpo-run check --reward ./examples/rewards/field_signatures.py:compute_score --dataset arithmetic
    grpo-run --reward ./examples/rewards/field_signatures.py:reward_func --dataset arithmetic --max-steps 1
"""

import re


def _right(text, gold) -> bool:
    found = re.findall(r"<answer>(.*?)</answer>", text, re.S)
    try:
        return bool(found) and float(found[-1].strip()) == float(str(gold))
    except ValueError:
        return False


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """verl: one response at a time; the dict's score is the reward, its other numbers are logged."""
    right = _right(solution_str, ground_truth)
    return {"score": float(right), "acc": float(right)}


def reward_func(queries, prompts, labels):
    """OpenRLHF: each query is the prompt and the response; one score per query."""
    return [float(_right(query[len(prompt):], label)) for query, prompt, label in zip(queries, prompts, labels)]


async def correct_answer(completion, answer, **kwargs):
    """verifiers: a rubric function; the completion is the list of messages."""
    return float(_right(completion[-1]["content"], answer))
