"""Broken rewards, one bug each, that the property checks must catch (and two sound ones).

Functions live at module level so the checks can run them in a worker process.
"""

from __future__ import annotations

import math
import os
import random
import re
from fractions import Fraction
import time
from pathlib import Path

from grpo_core import Direction, Param, RewardChecks, RewardSpec


def _closer_to_20(params):
    from hypothesis import strategies as st

    from grpo_core.testing import ranked_pairs

    return ranked_pairs(st.integers(0, 60), rank=lambda n: -abs(n - params["target"]), render=lambda n: "x" * n)


def distance_to_target(completion, target=20):
    """The classic wrong sign: rewards the distance from the target instead of closeness."""
    return float(abs(target - len(completion)))


WRONG_SIGN = RewardSpec(
    name="wrong-sign",
    description="length reward with the sign flipped",
    func=distance_to_target,
    bounds=(0.0, math.inf),
    params=(Param("target", 20, int),),
    checks=RewardChecks(
        directions=(Direction("a completion closer to the target length scores at least as high", _closer_to_20),),
    ),
)


def always_one_and_a_half(completion):
    return 1.5


OUT_OF_BOUNDS = RewardSpec("out-of-bounds", "returns 1.5 with bounds (0, 1)", always_one_and_a_half, bounds=(0.0, 1.0))


def share_of_longest(completions):
    """Normalises across the batch without declaring group_relative."""
    lengths = [len(c) for c in completions]
    longest = max(lengths + [1])
    return [n / longest for n in lengths]


BATCH_NORMALISED = RewardSpec("batch-normalised", "length relative to the batch's longest",
                              share_of_longest, batched=True)
GROUP_RELATIVE = RewardSpec("group-relative", "length relative to the batch's longest, declared",
                            share_of_longest, batched=True, group_relative=True)


def echoes_prompt(completion, prompt=None):
    """Assumes the prompt is a string: conversational datasets give a list of messages."""
    return 1.0 if prompt.strip().lower() in completion.lower() else 0.0


CHAT_CRASH = RewardSpec("chat-crash", "1 if the completion repeats the prompt", echoes_prompt)


def utf8_share(completion):
    """Crashes on lone surrogates, which a tokenizer's decode can produce."""
    return min(1.0, len(completion.encode("utf-8")) / 100)


SURROGATE_CRASH = RewardSpec("surrogate-crash", "UTF-8 size, capped", utf8_share)


def sleeps_on_tags(completion):
    if "<" in completion:
        time.sleep(60)
    return 0.5


SLEEPER = RewardSpec("sleeper", "hangs on any tag", sleeps_on_tags)


def backtracking_regex(completion):
    """A regex with nested quantifiers: exponential on long runs of 'x', and it holds the GIL."""
    return 1.0 if re.fullmatch(r"(x+x+)+y", completion) else 0.0


BACKTRACKER = RewardSpec("backtracker", "catastrophic regex", backtracking_regex)


def one_too_few(completions):
    return [0.5] * (len(completions) - 1)


ONE_TOO_FEW = RewardSpec("one-too-few", "drops a score", one_too_few, batched=True)


def coin_flip(completion):
    return random.random()


RANDOM = RewardSpec("random", "a coin flip", coin_flip)


def nan_when_empty(completion):
    return len(completion.strip()) / len(completion) if completion else math.nan


NAN = RewardSpec("nan-when-empty", "share of non-space characters", nan_when_empty)


def _answers(params):
    from hypothesis import strategies as st

    return st.fixed_dictionaries({"answer": st.integers(-99, 99).map(str)})


def _boxed(columns, params):
    return f"The answer is \\boxed{{{columns['answer']}}}"


def exact_answer(completion, answer):
    """Compares the whole completion with the answer, so a well-formatted answer scores 0."""
    return 1.0 if completion.strip() == str(answer).strip() else 0.0


BAD_GOLD = RewardSpec("bad-gold", "exact match with the answer", exact_answer, columns=("answer",),
                      params=(Param("answer_column", None, str),),
                      checks=RewardChecks(column_strategy=_answers, gold_example=_boxed))


def _same_value(text):
    """A number as its exact value (1, 1.0 and +1 are one answer), other text as written."""
    text = str(text).strip()
    return Fraction(text) if re.fullmatch(r"[-+]?\d+(\.\d+)?", text) else text


def boxed_answer(completion, answer):
    """1 when every \\boxed{...} holds the answer (two different boxed answers are a hedge), 0 otherwise."""
    found = {_same_value(box) for box in re.findall(r"\\boxed\{([^{}]*)\}", completion)}
    return 1.0 if found == {_same_value(answer)} else 0.0


def _right_beats_wrong(params):
    from hypothesis import strategies as st

    def pair(values):
        right, wrong = values
        return _boxed({"answer": str(right)}, params), _boxed({"answer": str(wrong)}, params), {"answer": str(right)}

    return st.tuples(st.integers(-99, 99), st.integers(-99, 99)).filter(lambda v: v[0] != v[1]).map(pair)


SOUND_ANSWER = RewardSpec(
    "sound-answer", "the boxed answer matches", boxed_answer, columns=("answer",),
    params=(Param("answer_column", None, str),),
    checks=RewardChecks(
        column_strategy=_answers, gold_example=_boxed,
        directions=(Direction("the right answer beats a wrong one", _right_beats_wrong, strict=True),),
    ),
)


def strict_ratio(completion, mode="lenient"):
    """Only the non-default mode divides by the length, so only drawn parameters find the crash."""
    if mode == "strict":
        return sum(c.isalpha() for c in completion) / len(completion)
    return 1.0 if completion.isalpha() else 0.0


MODE_CRASH = RewardSpec("mode-crash", "share of letters", strict_ratio,
                        params=(Param("mode", "lenient", str, "how to score", ("lenient", "strict")),))


def length_in_characters(completion):
    """Fine on everyday text, far over its declared bound on a huge one."""
    return float(len(completion))


LONG_TEXT_OVER_BOUND = RewardSpec("long-over-bound", "length, declared at most 1 000", length_in_characters,
                                  bounds=(0.0, 1_000.0))


def fails_once(completion):
    """Raises on its first call in a test (a marker file says it did), then scores 0.5."""
    marker = Path(os.environ["GRPO_TEST_FAILS_ONCE"])
    if not marker.exists():
        marker.write_text("failed once")
        raise RuntimeError("a server that answered once with an error")
    return 0.5


FAILS_ONCE = RewardSpec("fails-once", "raises on its first call only", fails_once)


_imported = []


def slow_first_call(completion):
    """Its first call in a process sleeps 3 s, as one that imports torch inside the function does."""
    if not _imported:
        time.sleep(3)
        _imported.append(True)
    return 0.5


SLOW_FIRST_CALL = RewardSpec("slow-first-call", "imports something slow on its first call", slow_first_call)
