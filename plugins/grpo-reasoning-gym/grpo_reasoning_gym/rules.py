"""The plugin's own rules for tasks whose checker pays answers that do not do the task, and the checkers themselves.

Number tasks are read without trailing words (``parse_number(..., units=False)``), except one unit word
the question itself uses (``42 legs`` where it asks how many legs; never a negation): grpo-core's reader
otherwise takes up to 40 characters of any text after a number as its unit, so ``42 zzz`` or
``42 is wrong`` equalled ``42``.

Found by scanning every task (``benchmarks/scan_reasoning_gym.py``, reasoning-gym 0.1.25): constant answers,
the copied question, and the gold answer with words after it.

``OWN_JUDGES``: tasks judged by the plugin alone, from the gold answer, without the task's checker.
game_of_life_halting's checker compares ``bool(answer)``, so any non-empty answer is right;
letter_jumble's and spell_backward's per-word or per-letter shares are added up in floating point and
reach 1.0 for some lengths with extra text after the gold. These compare the whole answer (case aside, as
their checkers do); graded, a share of the longer of the two, so extra words or letters lower it.

``ANSWER_FORMS``: tasks whose checker reads only part of the answer and ignores the rest (a number grid,
a move string, a fraction, a duration). The whole answer must be in the task's form before the checker
judges it; the forms take every answer the checker can pay and nothing else around it. Each pattern has
one way to match any text, so matching is linear in the answer's length.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache


def _ending(prediction: str, gold: str) -> str:
    """The answer without a closing period the gold answer does not have (``True.`` is ``True``)."""
    prediction = prediction.strip()
    return prediction[:-1] if prediction.endswith(".") and not gold.endswith(".") else prediction


def _exact(prediction: str, gold: str, strict: bool) -> float:
    return 1.0 if _ending(prediction, gold).lower() == gold.lower() else 0.0


def _share(got: list, expected: list) -> float:
    """Items equal at the same position, as a share of the longer list: extra items lower it."""
    longest = max(len(got), len(expected))
    if not longest:
        return 0.0
    return float(Fraction(sum(a == b for a, b in zip(got, expected)), longest))


def _words(prediction: str, gold: str, strict: bool) -> float:
    got, expected = _ending(prediction, gold).lower().split(), gold.lower().split()
    if strict:
        return 1.0 if got == expected else 0.0
    return _share(got, expected)


def _letters(prediction: str, gold: str, strict: bool) -> float:
    got, expected = _ending(prediction, gold).lower(), gold.lower()
    if strict:
        return 1.0 if got == expected else 0.0
    return _share(list(got), list(expected))


# task -> judge(prediction, gold answer, strict) -> score in [0, 1]
OWN_JUDGES = {
    "game_of_life_halting": _exact,
    "letter_jumble": _words,
    "spell_backward": _letters,
}

_INT = r"[-+]?\d+"
_LETTERS = r"[^\W\d_]+"
_CLAUSE = rf"{_LETTERS}\s+is\s+an?\s+{_LETTERS}"
_CLOCK = r"\d+:\d+(?::\d+(?:\.\d+)?)?"

# task -> the form a whole answer must have for the checker to judge it (fullmatch after stripping; a closing
# period is allowed after each)
_FORMS = {
    "fraction_simplification": r"\$*\s*(?:\\d?frac\s*\{\s*\d+\s*\}\s*\{\s*\d+\s*\}|\d+\s*/\s*\d+)\s*\$*",
    # "Anna is a knight, and Bob is a knave" in any order (the checker compares the set of assignments)
    "knights_knaves": rf"(?i:{_CLAUSE}(?:(?:\s*[,;]\s*|\s+)(?:and\s+)?{_CLAUSE})*)",
    "kakurasu": r"[01\s,]+",
    "quantum_lock": r"[A-Ca-c](?:\s*(?:(?:→|->|,)\s*)?[A-Ca-c])*",
    "sokoban": r"[UDLR\s,]+",
    "survo": rf"{_INT}(?:\s+{_INT})*",
    "time_intervals": rf"-?\d+\s+days?(?:,\s*{_CLOCK})?|{_CLOCK}",
}
ANSWER_FORMS = {task: re.compile(rf"(?:{form})\.?") for task, form in _FORMS.items()}


NEGATIONS = frozenset({"not", "no", "never", "nor", "none"})
_UNIT = re.compile(r"\s*([^\W\d_]+|°)\.?$")  # one trailing word or degree sign, then an optional period
_WORD = re.compile(r"[^\W\d_]+|°")


def unit_split(answer: str) -> tuple[str, str] | None:
    """``("42", "legs")`` for ``42 legs.``: the text before one trailing unit word, and the word in lower case."""
    match = _UNIT.search(answer)
    return (answer[: match.start()], match.group(1).lower()) if match and match.start() else None


def unit_words(question: str) -> frozenset:
    """The words a number answer may end with: the question's own, negations aside."""
    return frozenset(_WORD.findall(question.lower())) - NEGATIONS


@lru_cache(maxsize=None)
def checker(task: str):
    """The task's ``score_answer`` (one generator per task and process, built with its default config)."""
    from reasoning_gym.factory import get_score_answer_fn

    return get_score_answer_fn(task)


def checker_score(task: str, record: dict, prediction: str) -> float:
    """The task checker's score for an answer, in [0, 1]; an answer it cannot read (it raises) scores 0.0."""
    score_answer = checker(task)  # a checker that cannot be built is an error, not a wrong answer
    try:
        score = float(score_answer(prediction, record))
    except Exception:  # checkers raise on answers they cannot read: such an answer is wrong
        return 0.0
    return 0.0 if score != score else min(1.0, max(0.0, score))
