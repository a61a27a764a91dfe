"""Rewards that pay completions skipping the task, one way each, and sound ones that do not.

Functions live at module level so the checks can run them in a worker process.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from grpo_core import Param, RewardChecks, RewardSpec


def always_one(completion):
    return 1.0


PAYS_EVERYTHING = RewardSpec("pays-everything", "1.0 for any completion", always_one)
PAYS_EVERYTHING_UNBOUNDED = RewardSpec("pays-everything-unbounded", "1.0 for any completion, bounds (0, inf)",
                                       always_one, bounds=(0.0, math.inf))


def always_half(completion):
    return 0.5


HALF = RewardSpec("half", "0.5 for any completion: not more than half-way", always_half)
OPTED_OUT = RewardSpec("opted-out", "1.0 for any completion, with degenerate_share=1", always_one,
                       checks=RewardChecks(degenerate_share=1.0))


def distance_to_20(completion):
    """The classic wrong sign, with no direction declared: pays distance from 20 characters."""
    return float(abs(20 - len(completion)))


WRONG_SIGN_UNDECLARED = RewardSpec("wrong-sign-undeclared", "abs(20 - len(completion))", distance_to_20,
                                   bounds=(0.0, 1e6))


def _sums(params):
    from hypothesis import strategies as st

    return st.tuples(st.integers(0, 99), st.integers(0, 99)).map(
        lambda ab: {"prompt": f"What is {ab[0]} + {ab[1]}?", "answer": str(ab[0] + ab[1])})


def _tagged(columns, params):
    return f"<answer>{columns['answer']}</answer>"


def any_number(completion, answer):
    """Ignores the answer: any digit in the completion pays."""
    return 1.0 if re.search(r"\d", completion) else 0.0


IGNORES_ANSWER = RewardSpec("ignores-answer", "1 if the completion holds a number", any_number, columns=("answer",),
                            params=(Param("answer_column", None, str),),
                            checks=RewardChecks(column_strategy=_sums, gold_example=_tagged))


def _answer_tag(completion):
    end = completion.rfind("</answer>")
    start = completion.rfind("<answer>", 0, max(end, 0))
    return completion[start + len("<answer>"):end].strip() if 0 <= start < end else None


def _value(text):
    """A number as its exact value (7, 7.0 and +7 are one answer), other text as written."""
    text = str(text).strip()
    return Fraction(text) if re.fullmatch(r"[-+]?\d+(\.\d+)?", text) else text


def exact_tagged(completion, answer):
    """1 when the answer tag holds the answer (a number by its value)."""
    tag = _answer_tag(completion)
    return 1.0 if tag is not None and _value(tag) == _value(answer) else 0.0


def evaluated_tagged(completion, answer):
    """Evaluates the answer tag, so a copied expression such as '4 + 18' pays."""
    text = _answer_tag(completion)
    if text is None or not re.fullmatch(r"[\d\s+*/().-]+", text) or len(text) > 40:
        return 0.0
    try:
        return 1.0 if abs(eval(text, {"__builtins__": {}}) - float(answer)) < 1e-9 else 0.0  # noqa: S307
    except Exception:
        return 0.0


def _copied_answers(prompt, columns, params):
    from grpo_core.testing import copied_prompt, placeholders, prompt_numbers

    return [*copied_prompt(prompt, "<answer>{}</answer>"), *prompt_numbers(prompt, "<answer>{}</answer>", exclude=[columns["answer"]]),
            *placeholders(("answer",))]


EXACT = RewardSpec("exact-answer", "the answer tag holds the sum", exact_tagged, columns=("answer",),
                   params=(Param("answer_column", None, str),),
                   checks=RewardChecks(column_strategy=_sums, gold_example=_tagged, degenerate=_copied_answers))
EVALUATES = RewardSpec("evaluates-answer", "the answer tag evaluates to the sum", evaluated_tagged, columns=("answer",),
                       params=(Param("answer_column", None, str),),
                       checks=RewardChecks(column_strategy=_sums, gold_example=_tagged, degenerate=_copied_answers))


def _raises(prompt, columns, params):
    raise KeyError("solution")


def _not_pairs(prompt, columns, params):
    return ["just a string"]


DEGENERATE_RAISES = RewardSpec("degenerate-raises", "exact answer, degenerate() raises", exact_tagged,
                               columns=("answer",),
                               checks=RewardChecks(column_strategy=_sums, gold_example=_tagged, degenerate=_raises))
DEGENERATE_NOT_PAIRS = RewardSpec("degenerate-not-pairs", "exact answer, degenerate() returns strings", exact_tagged,
                                  columns=("answer",), checks=RewardChecks(column_strategy=_sums, gold_example=_tagged,
                                                                          degenerate=_not_pairs))


def _unreadable_gold(columns, params):
    answer = str(columns["answer"])
    return [] if answer.strip().lstrip("-").isdigit() else [("gold answer cannot be read", answer)]


def _some_words(params):
    from hypothesis import strategies as st

    return st.fixed_dictionaries({"answer": st.one_of(st.integers(0, 99).map(str), st.sampled_from(["seven", "forty two"]))})


def _failing_survey(columns, params):
    if columns["answer"] == "boom":
        raise ValueError("cannot parse 'boom'")
    return []


READS_GOLD = RewardSpec("reads-gold", "the answer tag holds the gold", exact_tagged, columns=("answer",),
                        params=(Param("answer_column", None, str),),
                        checks=RewardChecks(column_strategy=_some_words, gold_example=_tagged,
                                            row_problems=_unreadable_gold))
SURVEY_RAISES = RewardSpec("survey-raises", "the answer tag holds the gold", exact_tagged, columns=("answer",),
                           checks=RewardChecks(gold_example=_tagged, row_problems=_failing_survey))
