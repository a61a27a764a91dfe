"""Module-level reward functions for the adapter tests (a timeout needs picklable functions)."""

import time


def count_a(completion, answer=None, strict=False):
    if "boom" in completion:
        raise ValueError("boom in the completion")
    if strict and answer is None:
        return None
    return completion.count("a") / max(len(completion), 1)


def sleepy(completion):
    if completion.startswith("hang"):
        time.sleep(60)
    return 1.0


def always_fails(completion):
    raise KeyError("missing key")


def token_count(completion, completion_ids=None):
    return float(len(completion_ids))


def batch_len(completions, answer):
    return [float(len(c) == len(a)) for c, a in zip(completions, answer)]
