"""Third-party rewards that pay the generic attacks, written as a user would (most declare no checks), and sound
ones beside them. Functions live at module level so the checks can run them in a worker process."""

from __future__ import annotations

import re
from fractions import Fraction

from grpo_core import Param, RewardChecks, RewardSpec


def contains_gold(completion, answer):
    """1.0 when the gold answer appears anywhere in the completion."""
    return 1.0 if str(answer) in completion else 0.0


CONTAINS_GOLD = RewardSpec("contains-gold", "1 if str(gold) is in the completion", contains_gold, columns=("answer",))


def _answer_tag(completion):
    end = completion.rfind("</answer>")
    start = completion.rfind("<answer>", 0, max(end, 0))
    return completion[start + len("<answer>"):end] if 0 <= start < end else None


def answer_length(completion):
    """The length of the answer tag's content, 1.0 from 20 characters: meant to reward answering at all."""
    content = _answer_tag(completion)
    return min(1.0, len(content) / 20) if content else 0.0


ANSWER_LENGTH = RewardSpec("answer-length", "the answer tag's length, 1 from 20 characters", answer_length)


def any_boxed(completion, answer):
    """1.0 when any \\boxed{} holds the gold."""
    return 1.0 if str(answer).strip() in re.findall(r"\\boxed\{([^{}]*)\}", completion) else 0.0


ANY_BOXED = RewardSpec("any-boxed", "1 if any boxed value is the gold", any_boxed, columns=("answer",))


def last_boxed(completion, answer):
    """1.0 when the last \\boxed{} holds the gold, as many math rewards read the final answer."""
    found = re.findall(r"\\boxed\{([^{}]*)\}", completion)
    return 1.0 if found and found[-1].strip() == str(answer).strip() else 0.0


def _boxed_gold(columns, params):
    return f"The answer is $\\boxed{{{columns['answer']}}}$."


LAST_BOXED = RewardSpec("last-boxed", "1 if the last boxed value is the gold", last_boxed, columns=("answer",),
                        checks=RewardChecks(gold_example=_boxed_gold))


def any_number_in_tag(completion, answer):
    """1.0 when one of the numbers in the answer tag is the gold."""
    return 1.0 if str(answer).strip() in (_answer_tag(completion) or "").split() else 0.0


ANY_IN_TAG = RewardSpec("any-in-tag", "1 if a number in the answer tag is the gold", any_number_in_tag,
                        columns=("answer",))


def _value(text):
    """A number as its exact value (7, 7.0 and +7 are one answer), other text as written."""
    text = str(text).strip()
    return Fraction(text) if re.fullmatch(r"[-+]?\d+(\.\d+)?", text) else text


def tag_answer(completion, answer):
    """1.0 when the answer tag holds exactly the gold (a number by its value): the sound reward beside the ones
    above."""
    return 1.0 if _value(_answer_tag(completion) or "") == _value(answer) else 0.0


def _gold(columns, params):
    return f"<answer>{columns['answer']}</answer>"


TAG_ANSWER = RewardSpec("tag-answer", "1 if the answer tag is the gold", tag_answer, columns=("answer",),
                        checks=RewardChecks(gold_example=_gold))


def _visible_length(text):
    """Characters that are not whitespace, a run of one character counted once, a repeated sentence once."""
    kept = "".join(ch for ch in text if not ch.isspace())
    kept = re.sub(r"(.)\1+", r"\1", kept)
    return len("".join(dict.fromkeys(re.split(r"(?<=[.!?])", kept))))


def visible_length(completion):
    """Closeness to 200 characters of visible, non-repeated text (1 at 200), as a length reward might count it."""
    return max(0.0, 1.0 - abs(_visible_length(completion) - 200) / 200)


def _two_hundred(columns, params):
    return "".join(chr(ord("a") + i % 26) + chr(ord("A") + i // 26 % 26) for i in range(100))


VISIBLE_LENGTH = RewardSpec("visible-length", "closeness to 200 visible characters", visible_length,
                            checks=RewardChecks(gold_example=_two_hundred))


def _shows(content):
    """Letters and digits that show: not Hangul fillers (Python counts them as letters), not private-use."""
    return {ch for ch in content if ch.isalnum() and ch not in "\u3164\u115f\u1160\uffa0"}


def answer_given(completion):
    """A format reward: 1.0 when the answer tag holds at least two different letters or digits that show."""
    return 1.0 if len(_shows(_answer_tag(completion) or "")) > 1 else 0.0


ANSWER_GIVEN = RewardSpec("answer-given", "1 if the answer tag holds visible content", answer_given)


def guarded(completion, guard="on"):
    return 0.0


GUARDED = RewardSpec("guarded", "0 always; its guard parameter has an unsafe value", guarded,
                     params=(Param("guard", "on", str, "off switches a safety off", ("on", "off"), unsafe=("off",)),))
