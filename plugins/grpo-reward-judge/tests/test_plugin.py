"""The plugin as grpo-core sees it: grpo-core's property suite on both rewards, discovery, parameters refused.

The suite needs a judge model to ask. The embedded SmolLM2-135M does not pass it (the README's figures: it cannot tell
a right answer from a wrong one), so here the suite asks a reference judge instead: a loopback server that grades as
a sound judge of the correctness rubrics would (10 for exactly "The answer is REFERENCE.", 1 for anything else). What
the suite then tests is the plugin itself, given a sound judge: the prompts it sends, how it reads verdicts into
scores, its cache and its measures. test_embedded.py (slow) asks the real embedded judge.
"""

import re

import pytest

from grpo_core import UsageError, load_rewards
from grpo_core.testing import get_spec

from grpo_reward_judge import GROUP_SPEC, SPEC


def _grade(text: str, reference: str) -> int:
    """10 for "The answer is X." where X is the reference (a number by its value: 12, 12.0 and +12 alike)."""
    said = re.fullmatch(r"The answer is (.+)\.", text.strip())
    if said is None:
        return 1
    try:
        return 10 if float(said.group(1).strip()) == float(reference) else 1
    except ValueError:
        return 10 if said.group(1).strip() == reference else 1


def reference_verdict(message: str) -> str:
    """The verdict of a sound judge on one request of the correctness rubric (pointwise) or group rubric."""
    reference = message.split("\nReference answer: ", 1)[1].split("\n", 1)[0]
    if message.startswith("Grade a student's answer"):
        student = message.split("\nStudent answer: ", 1)[1].rsplit("\nIs the student's answer correct?", 1)[0]
        return str(_grade(student, reference))
    n = int(re.match(r"Grade (\d+) students' answers", message).group(1))
    shown = message.split(f"\nReference answer: {reference}\n\n", 1)[1]
    shown = shown.rsplit("\nA correct answer matches the reference", 1)[0]
    grades, start = [], 0
    for k in range(1, n + 1):  # "Answer k:\n" blocks, in order, separated by a blank line
        start = shown.index(f"Answer {k}:\n", start) + len(f"Answer {k}:\n")
        end = shown.find(f"\n\nAnswer {k + 1}:\n", start) if k < n else len(shown)
        grades.append(_grade(shown[start:end], reference))
    if "Rank the" in message.rsplit("\n", 1)[-1]:
        tiers = [[str(k) for k, grade in enumerate(grades, 1) if grade == level] for level in (10, 1)]
        return " > ".join(" = ".join(tier) for tier in tiers if tier)
    return "\n".join(f"{k}: {grade}" for k, grade in enumerate(grades, 1))


@pytest.fixture
def reference_judge(judge_plugin, faults):
    """The parameters that point a judge reward at the reference judge (with a verdict cache of the test's own)."""
    return {"base_url": faults(verdict=reference_verdict).url, "model": "reference"}


def test_the_reference_judge_grades_right_answers_only():
    single = ("Grade a student's answer against the reference answer.\nQuestion: q\nReference answer: 12\nStudent "
              "answer: The answer is 12.\nIs the student's answer correct? 10 means it matches the reference, ...")
    assert reference_verdict(single) == "10"
    assert reference_verdict(single.replace("is 12.", "is 13.")) == "1"
    group = ("Grade 3 students' answers to one question against the reference answer.\nQuestion: q\nReference "
             "answer: 12\n\nAnswer 1:\n12\n\nAnswer 2:\nThe answer is 12.\n\nAnswer 3:\n\nA correct answer matches "
             "the reference; 10 means correct, 1 means wrong.\n")
    assert reference_verdict(group + "Score each answer from 1 to 10. ...") == "1: 1\n2: 10\n3: 1"
    assert reference_verdict(group + "Rank the 3 answers from best to worst. ...") == "2 > 1 = 3"


def test_property_suite(grpo_check, reference_judge):
    grpo_check(SPEC, params=reference_judge, max_examples=5, seed=0)


def test_group_property_suite(grpo_check, reference_judge):
    grpo_check(GROUP_SPEC, params=reference_judge, max_examples=5, seed=0)


def test_registered_through_the_entry_point():
    assert get_spec("reward", "judge").distribution == get_spec("reward", "judge-group").distribution == \
        "grpo-reward-judge"


@pytest.mark.parametrize("name, params, message", [
    ("judge", {"base_url": "http://127.0.0.1:9"}, "base_url http://127.0.0.1:9 is given without a model"),
    ("judge", {"max_concurrency": 0}, "max_concurrency must be 1 or more, got 0"),
    ("judge", {"rubric": "tone"}, "unknown rubric 'tone'"),
    ("judge-group", {"max_tokens": 0}, "max_tokens must be 1 or more, got 0"),
    ("judge-group", {"rubric": "tone"}, "unknown group rubric 'tone'"),
])
def test_bad_parameters_are_refused_when_the_reward_is_loaded(judge_plugin, name, params, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        load_rewards([name], {name: params})
