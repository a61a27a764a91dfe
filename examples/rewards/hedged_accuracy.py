"""A reward written for TRL with a bug grpo-run check finds: the first number in the answer tag is taken, so
"<answer>42 or 41</answer>" is paid as the right answer (a hedge), and "42.0" is refused for 42.

    grpo-run check --reward ./examples/rewards/hedged_accuracy.py:accuracy --dataset arithmetic
"""

import re


def accuracy(completions, answer, **kwargs):
    """1.0 when the first number in the last <answer> tag is the row's answer, written as it is."""
    scores = []
    for completion, gold in zip(completions, answer):
        text = completion[0]["content"] if isinstance(completion, list) else completion
        tags = re.findall(r"<answer>(.*?)</answer>", text, re.S)
        first = re.search(r"-?\d+(?:\.\d+)?", tags[-1]) if tags else None
        scores.append(1.0 if first and first.group() == str(gold).strip() else 0.0)
    return scores
