"""Rubrics: a prompt template over the row's columns and how to read the judge's verdict as a score in [0, 1].

``{prompt}`` and ``{completion}`` are filled from the batch; every other field of the template (``{answer}``,
``{reference}``) is a dataset column the reward then needs. ``add_rubric`` registers another one by name.

A ``GroupRubric`` (reward ``judge-group``) shows all completions of one prompt at once: ``{completions}`` is the
numbered list and ``{n}`` their count; ``add_group_rubric`` registers one. How its verdict is read:
``grpo_reward_judge.group``.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from fractions import Fraction

FILLED = ("prompt", "completion")  # filled from the batch, not from dataset columns
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s*/\s*(\d+))?")


@dataclass(frozen=True)
class Rubric:
    """``template`` is a ``str.format`` template; the verdict is a number on ``scale`` (low, high) or one of
    ``choices`` (word -> score in [0, 1]); a verdict that is neither cannot be read."""

    name: str
    template: str
    scale: tuple[int, int] | None = (1, 10)
    choices: dict[str, float] = field(default_factory=dict, hash=False)

    @property
    def columns(self) -> tuple[str, ...]:
        """The dataset columns the template reads, in order of first use."""
        names = [f for _, f, _, _ in string.Formatter().parse(self.template) if f]
        return tuple(dict.fromkeys(n for n in names if n not in FILLED))

    def fill(self, prompt: str, completion: str, columns: dict) -> str:
        return self.template.format_map({**{k: "" if v is None else v for k, v in columns.items()},
                                         "prompt": prompt, "completion": completion})

    def read(self, verdict: str) -> float | None:
        """The verdict as a score in [0, 1], or None when it holds no readable verdict."""
        if self.choices:
            words = re.findall(r"[a-z]+", verdict.lower())
            return next((self.choices[w] for w in words if w in self.choices), None)
        low, high = self.scale
        for match in _NUMBER.finditer(verdict):
            value, out_of = Fraction(match.group(1)), match.group(2)
            if out_of is not None and int(out_of) != high:
                continue  # "3/5" on a 1-10 scale is not a verdict on this scale
            if low <= value <= high:
                return float((value - low) / (high - low))
        return None

    def identity(self) -> str:
        """What of the rubric decides a verdict, for the cache key."""
        return repr((self.template, self.scale, sorted(self.choices.items())))


_ASK = "Reply with one number from 1 to 10 and nothing else."
RUBRICS: dict[str, Rubric] = {}


def add_rubric(rubric: Rubric) -> None:
    """Register ``rubric`` under its name (a plugin adds its own this way); a name taken is a ValueError."""
    if rubric.name in RUBRICS:
        raise ValueError(f"a rubric named '{rubric.name}' exists already; pick another name")
    if rubric.scale is None and not rubric.choices:
        raise ValueError(f"rubric '{rubric.name}' declares neither a scale nor choices; give one")
    RUBRICS[rubric.name] = rubric


def get_rubric(name: str) -> Rubric:
    if name not in RUBRICS:
        raise ValueError(f"unknown rubric '{name}'; known: {', '.join(sorted(RUBRICS))}")
    return RUBRICS[name]


add_rubric(Rubric("correctness", (
    "Grade a student's answer against the reference answer.\n"
    "Question: {prompt}\nReference answer: {answer}\nStudent answer: {completion}\n"
    "Is the student's answer correct? 10 means it matches the reference, 1 means it is wrong. " + _ASK)))
add_rubric(Rubric("instruction-following", (
    "Instruction: {prompt}\nResponse: {completion}\n"
    "How well does the response follow the instruction? 10 means fully, 1 means not at all. " + _ASK)))
add_rubric(Rubric("concision", (
    "Question: {prompt}\nAnswer: {completion}\n"
    "Is the answer concise, without filler or repetition? 10 means concise, 1 means padded. " + _ASK)))


GROUP_FILLED = ("prompt", "completions", "n")
GROUP_ASK = {
    "scores": "Score each answer from {low} to {high}. Reply with one line per answer, NUMBER: SCORE (for example "
              "`1: 7`), for all {n} answers, and nothing else.",
    "ranking": "Rank the {n} answers from best to worst. Reply with their numbers separated by `>` (for example "
               "`{example}`; `=` for a tie), and nothing else.",
}


@dataclass(frozen=True)
class GroupRubric:
    """``template`` is a ``str.format`` template over ``{prompt}``, ``{completions}``, ``{n}`` and dataset columns;
    the request to score or to rank on ``scale`` is added after it. ``pointwise`` names the rubric that scores a
    group of one completion (default: the rubric of the same name)."""

    name: str
    template: str
    scale: tuple[int, int] = (1, 10)
    pointwise: str = ""

    @property
    def columns(self) -> tuple[str, ...]:
        names = [f for _, f, _, _ in string.Formatter().parse(self.template) if f]
        return tuple(dict.fromkeys(n for n in names if n not in GROUP_FILLED))

    def fill(self, prompt: str, numbered: str, n: int, columns: dict, verdict: str) -> str:
        low, high = self.scale
        example = " > ".join(str(i) for i in [2, 1, *range(3, n + 1)][:n])
        filled = self.template.format_map({**{k: "" if v is None else v for k, v in columns.items()},
                                           "prompt": prompt, "completions": numbered, "n": n})
        return filled + "\n" + GROUP_ASK[verdict].format(low=low, high=high, n=n, example=example)

    def identity(self, verdict: str) -> str:
        """What of the rubric decides a verdict, for the cache key (the order of the answers is in the prompt)."""
        return repr(("group", verdict, self.template, self.scale, GROUP_ASK[verdict]))

    def pointwise_rubric(self) -> Rubric:
        return get_rubric(self.pointwise or self.name)


GROUP_RUBRICS: dict[str, GroupRubric] = {}


def add_group_rubric(rubric: GroupRubric) -> None:
    """Register ``rubric`` for ``judge-group`` under its name; a name taken is a ValueError."""
    if rubric.name in GROUP_RUBRICS:
        raise ValueError(f"a group rubric named '{rubric.name}' exists already; pick another name")
    if "{completions}" not in rubric.template:
        raise ValueError(f"group rubric '{rubric.name}' does not show {{completions}}; put it in its template")
    GROUP_RUBRICS[rubric.name] = rubric


def get_group_rubric(name: str) -> GroupRubric:
    if name not in GROUP_RUBRICS:
        raise ValueError(f"unknown group rubric '{name}'; known: {', '.join(sorted(GROUP_RUBRICS))}")
    return GROUP_RUBRICS[name]


add_group_rubric(GroupRubric("correctness", (
    "Grade {n} students' answers to one question against the reference answer.\n"
    "Question: {prompt}\nReference answer: {answer}\n\n{completions}\n"
    "A correct answer matches the reference; 10 means correct, 1 means wrong.")))
add_group_rubric(GroupRubric("instruction-following", (
    "Instruction: {prompt}\n\n{n} responses:\n{completions}\n"
    "How well does each response follow the instruction? 10 means fully, 1 means not at all.")))
add_group_rubric(GroupRubric("concision", (
    "Question: {prompt}\n\n{n} answers:\n{completions}\n"
    "Is each answer concise, without filler or repetition? 10 means concise, 1 means padded.")))
