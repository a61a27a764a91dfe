"""The ``math`` reward: 1.0 when the completion's final answer equals the gold answer, else 0.0.

Two tiers. Plain numbers are compared in-process, exactly, by grpo_core's number reading
(public as grpo_core.parse_number and grpo_core.same_number); with a plain-number gold answer
that is the whole judgement, because only a number written as a number is an answer to it.
Everything else (LaTeX, sets, intervals, matrices, and expressions when ``allow_expressions``
is on) goes to math-verify in grpo_core's worker pool, all the batch's items at once, each
under a hard deadline that holds from any thread.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from grpo_core import Number, Unscored, completion_text, find_numbers, parse_number, same_number

from grpo_reward_math.extract import boxes, marked_answer
from grpo_reward_math.final import mixed_parts, negated
from grpo_reward_math.finals import MAX_FINALS, Found, find_answer, several_values
from grpo_reward_math.forms import copies_prompt, exact_value, math_only, question_text, same_quantity, unwrap

EXTRACT_MODES = ("auto", "answer-tag", "boxed", "last-number")
WARM_UP_SECONDS = 120.0  # allowance for a cold worker to import math-verify and sympy
MAX_SPAN = 10_000  # a tag or box longer than this that is not a plain number is not an answer

# Words that are math, not prose, in a gold answer made of letters only.
_MATH_WORDS = {"pi", "inf", "infty", "infinity", "oo", "e", "i"}
_LETTERS_ONLY = re.compile(r"[A-Za-z][A-Za-z\s'\-]*")
_DELIMITED = re.compile(r"^\s*(\$\$|\$|\\\(|\\\[)(.*?)(\$\$|\$|\\\)|\\\])\s*$", re.S)


@dataclass(frozen=True)
class _Symbolic:
    """Answers only math-verify can judge. Each of ``needs`` must hold; a need holds when every answer of one of its
    alternatives (tried in order) is right."""

    needs: tuple[tuple[tuple[str, ...], ...], ...]

    @classmethod
    def of(cls, *spans: str) -> _Symbolic:
        """Every one of ``spans`` must be right."""
        return cls(tuple(((span,),) for span in spans))

    def spans(self) -> tuple[str, ...]:
        """The answers of a symbolic outcome with one alternative per need, which all must be right."""
        return tuple(span for need in self.needs for span in need[0])


@dataclass(frozen=True)
class Unreadable:
    """A gold answer that cannot be read, and why."""

    detail: str


def read_gold(raw) -> Number | str | Unreadable:
    """The gold answer as a plain Number, as text for math-verify, or Unreadable.

    A gsm8k-style solution is reduced to what follows its last ``####``, a worked solution to
    its last ``\\boxed{}``. Words that are not math (``forty two``, a name) are unreadable.
    """
    if raw is None or isinstance(raw, bool):
        return Unreadable("no gold answer")
    if isinstance(raw, float) and raw != raw:  # NaN: a missing value in a pandas-made column
        return Unreadable("no gold answer")
    text = str(raw).strip()
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip()
    if not text:
        return Unreadable("empty gold answer")
    answer = text
    if "\\boxed" in text or "\\fbox" in text:
        found = boxes(text)
        answer = found[0][2] if len(found) == 1 else answer  # several boxes: a list, for math-verify
    number = parse_number(answer)
    if number is not None:
        return number
    if _LETTERS_ONLY.fullmatch(text) and any(len(w) > 2 and w.lower() not in _MATH_WORDS for w in text.split()):
        return Unreadable("gold answer is words, not math")
    return text


def gold_problem(raw) -> str | None:
    """Why a gold answer cannot be read without math-verify, or None when it may be readable."""
    gold = read_gold(raw)
    return gold.detail if isinstance(gold, Unreadable) else None


_VALUE_START = re.compile(r"[\d$\\]")
_LETTER = re.compile(r"[^\W\d_]")
_IS = re.compile(r"\b(?:is|are|equals|was|be)\b\s*:?|[:=]")


def _plain_prediction(span: str, marked_line: bool = False) -> Number | None:
    """The number an answer span states: the span itself, else what follows its last ``answer is``/``is``."""
    if span.startswith("\\boxed{") and span.endswith("}"):
        span = span[7:-1]
    number = parse_number(span)
    if number is not None or len(span) > MAX_SPAN:
        return number
    marked = marked_answer(span)  # <answer>The answer is 42.</answer>
    if marked is not None:
        span, marked_line = marked[1], True
        number = parse_number(span)
    if number is None and "\n" not in span.strip():
        tail = None
        for tail in _IS.finditer(span):  # "The largest $n$ is 34"
            pass
        if tail is not None:
            number = parse_number(span[tail.end() :])
    if number is None and marked_line and len(span) < 500:
        tokens, previous = [], 0
        for token in find_numbers(span):  # "42, not 41": a denied number is not stated
            if not negated(span[previous : token.start]):
                tokens.append(token)
            previous = token.end
        if len(tokens) == 1:  # "Final Answer: Jane started 3 hours ago": the one number the answer states
            number = tokens[0].number
    return number


def _float_rendering(gold: Number, number: Number) -> bool:
    """Whether ``number`` is how a float prints the gold value (12+ significant digits, correctly rounded)."""
    key = number.key
    if key[0] != "decimal" or len(key[2]) < 12 or gold.value is None or number.value is None:
        return False
    places = -key[3]
    return places > 0 and round(gold.value, places) == number.value


def _bare(text: str) -> str:
    match = _DELIMITED.match(text)
    inner = match.group(2) if match else text
    return re.sub(r"\s+", "", inner)


def _denied(span: str) -> bool:
    """Whether the answer opens by denying its value (``not 42``, ``definitely not $\\frac12$``)."""
    first = _VALUE_START.search(span)
    return first is not None and first.start() > 1 and negated(span[: first.start()])


def judge_fast(gold: Number | str, found: Found | None, rel_tol: float = 0.0, allow_expressions: bool = True,
               gold_text: str = "", question: str = ""):
    """The score when the fast path is certain of it, else the ``_Symbolic`` candidates for math-verify.

    ``question`` is the prompt's question: an answer restating its expression is a copy and scores 0.0.
    """
    if found is None:
        return 0.0
    if found.number is not None:
        if isinstance(gold, Number):
            return float(same_number(gold, found.number, rel_tol=rel_tol))
        return _Symbolic.of(found.number.latex())
    span = found.span or ""
    if not span.strip() or _denied(span[:200]):
        return 0.0
    if question and len(span) <= MAX_SPAN and not span.strip().isdigit() and copies_prompt(span, question, gold_text):
        return 0.0
    if isinstance(gold, Number):
        if several_values(span[:MAX_SPAN]):
            return 0.0  # x = 25, x = 22: two values, not one answer
        number = _plain_prediction(span, found.source in ("marker", "sentence"))
        if number is None:
            if allow_expressions or mixed_parts(unwrap(span)) is not None:
                number = exact_value(span)  # a mixed number (1 1/2), or a fraction in any terms (2/4)
        if number is not None:
            units = same_quantity(gold_text, span, rel_tol) if _LETTER.search(span) and _LETTER.search(gold_text) else None
            if units is not None:
                return float(units)
            return float(same_number(gold, number, rel_tol=rel_tol) or _float_rendering(gold, number))
        # Without expressions only a number written as a number is an answer (4 + 18 is not).
        if not allow_expressions or len(span) > MAX_SPAN or not math_only(span):
            return 0.0
        return _Symbolic.of(span)
    if len(span) > MAX_SPAN:
        return 0.0
    if _bare(span) == _bare(gold):
        return 1.0
    return _Symbolic.of(span)


def _every(outcomes) -> float | _Symbolic:
    """The score when every outcome must be right: 0.0 if one is wrong, 1.0 if all are, else what math-verify checks."""
    needs: list = []
    for outcome in outcomes:
        if not isinstance(outcome, _Symbolic):
            if outcome != 1.0:
                return 0.0
            continue
        needs += [need for need in outcome.needs if need not in needs]
    return _Symbolic(tuple(needs)) if needs else 1.0


def _either(first, second: _Symbolic) -> float | _Symbolic:
    """The score when ``first`` (a float, or answers that all must be right) or the list ``second`` is enough."""
    if first == 1.0:
        return 1.0
    if not isinstance(first, _Symbolic):
        return second
    return _Symbolic(((first.spans(), second.spans()),))


def judge_answer(gold: Number | str, found: Found | None, rel_tol: float = 0.0, allow_expressions: bool = True,
                 gold_text: str = "", question: str = ""):
    """``judge_fast`` for a completion's final answer and the other final answers it writes: it pays only when they
    are all the same value (plain numbers compared exactly) and right; a run of boxes may be one list answer."""
    if found is None or len(found.earlier) > MAX_FINALS:
        return 0.0
    if len(found.group) < 2 and not found.earlier:
        return judge_fast(gold, found, rel_tol, allow_expressions, gold_text, question)
    stated = (found.number or _plain_value(found.span)) if isinstance(gold, Number) else None

    def judged(final: Found):
        value = _plain_value(final.span) if stated is not None else None
        if value is not None:
            return float(same_number(stated, value))  # the same value, exactly, as the final answer
        return judge_fast(gold, final, 0.0, allow_expressions, gold_text, question)

    def one(final: Found, last: bool = False):
        """One final answer: its last box and the boxes run together with it each right, or the run as a list."""
        alone = Found(span=final.span, number=final.number, source=final.source)
        boxed = [Found(span=f"\\boxed{{{content}}}", source="box") for content in final.group[:-1]]
        right = judge_fast(gold, alone, rel_tol, allow_expressions, gold_text, question) if last else judged(alone)
        outcome = _every([right] + [judged(box) for box in boxed])
        if not boxed or isinstance(gold, Number):
            return outcome
        return _either(outcome, _Symbolic.of("$" + ", ".join(f"\\boxed{{{c}}}" for c in final.group) + "$"))

    return _every([one(found, last=True)] + [one(final) for final in found.earlier])


def _plain_value(span: str | None) -> Number | None:
    """The plain number an answer is, when it is nothing else (``\\boxed{0.5}``, ``<answer>1/2</answer>``)."""
    return parse_number(unwrap(span or "")[:MAX_SPAN]) if span else None


def math_reward(
    completions,
    answer,
    *,
    answer_column="answer",
    extract="auto",
    tag="answer",
    timeout=5.0,
    rel_tol=0.0,
    allow_expressions=True,
    prompts=None,
):
    """Score a batch: 1.0 correct, 0.0 wrong or missing, ``Unscored`` where it cannot judge.

    ``completions`` are texts (or TRL completions); ``answer`` holds the gold answers, one per
    completion. An item whose gold answer cannot be read is ``Unscored("unscorable")``; one that
    math-verify cannot judge within ``timeout`` seconds scores 0.0 as ``Unscored("timeout", score=0.0)``,
    so the run counts it; one whose judging fails outright is ``Unscored("error")``. Never raises on odd input.
    ``prompts`` (one per completion, as TRL passes them) let the reward refuse answers that copy the question.
    """
    completions = list(completions)
    answers = list(answer)
    questions = [question_text(p) for p in prompts] if prompts is not None else []
    questions += [""] * (len(completions) - len(questions))
    scores: list = [Unscored("error", "not scored")] * len(completions)
    golds: dict[str, Number | str | Unreadable] = {}
    waiting: list[tuple[int, Number | str, _Symbolic]] = []
    for index, (completion, raw_gold) in enumerate(zip(completions, answers)):
        try:
            key = raw_gold if isinstance(raw_gold, str) else repr(raw_gold)
            if key not in golds:
                golds[key] = read_gold(raw_gold)
            gold = golds[key]
            if isinstance(gold, Unreadable):
                scores[index] = Unscored("unscorable", f"{gold.detail}: {str(raw_gold)[:80]!r}")
                continue
            found = find_answer(completion_text(completion), extract, tag)
            gold_text = raw_gold if isinstance(raw_gold, str) else ""
            outcome = judge_answer(gold, found, rel_tol, allow_expressions, gold_text, questions[index])
        except Exception as error:  # one bad item must not cost the batch
            scores[index] = Unscored("error", f"{type(error).__name__}: {error}")
            continue
        if isinstance(outcome, _Symbolic):
            waiting.append((index, gold, outcome))
        else:
            scores[index] = outcome
    if waiting:
        _judge_symbolic(waiting, scores, timeout)
    return scores


def validate_params(params: dict) -> None:
    """Raise ValueError, with a sentence naming the value, for parameters ``math_reward`` cannot work with."""
    if not re.fullmatch(r"[A-Za-z][\w.-]*", params["tag"] or ""):
        raise ValueError(f"tag must be an XML tag name such as 'answer', got {params['tag']!r}")
    rel_tol = params["rel_tol"]
    if rel_tol is None or not math.isfinite(rel_tol) or rel_tol < 0:
        raise ValueError(f"rel_tol must be a finite number >= 0 (0 compares exactly), got {rel_tol!r}")
    if not params["answer_column"]:
        raise ValueError("answer_column must name the dataset column holding the gold answer, e.g. 'answer'")


def _timed_out(result) -> bool:
    return isinstance(result, Unscored) and result.reason == "timeout"


def _judge_symbolic(waiting, scores, timeout) -> None:
    from grpo_core import run_with_timeouts, warm_workers

    from grpo_reward_math.symbolic import gold_parses, judge, warm_up

    # A worker replaced after a timeout starts cold; importing sympy must not eat an item's deadline.
    warm_workers(warm_up, max(WARM_UP_SECONDS, timeout))
    # Gold answers first, so that a gold math-verify cannot read is unscorable rather than 0.0.
    symbolic_golds = sorted({gold for _, gold, _ in waiting if isinstance(gold, str)})
    readable = set()
    unread: dict[str, Unscored] = {}  # gold answers math-verify could not read in time, or that broke it
    if symbolic_golds:
        results = run_with_timeouts(gold_parses, [((gold,), {}) for gold in symbolic_golds], timeout)
        readable = {gold for gold, ok in zip(symbolic_golds, results) if ok is True}
        for gold, result in zip(symbolic_golds, results):
            if _timed_out(result):
                unread[gold] = Unscored("timeout", f"reading the gold answer took longer than {timeout:g} s")
            elif isinstance(result, Unscored):
                unread[gold] = result
        if any(_timed_out(result) for result in results):
            warm_workers(warm_up, max(WARM_UP_SECONDS, timeout))
    unique: dict[tuple, list[int]] = {}  # identical (gold, answer) items, common within a GRPO group, run once
    for index, gold, item in waiting:
        if isinstance(gold, str) and gold not in readable:
            scores[index] = unread.get(gold) or Unscored(
                "unscorable", f"math-verify cannot read the gold answer {gold[:80]!r}"
            )
            continue
        gold_text = gold if isinstance(gold, str) else gold.latex()
        unique.setdefault((gold_text, item.needs), []).append(index)
    if not unique:
        return
    calls = [(key, {}) for key in unique]
    for indices, result in zip(unique.values(), run_with_timeouts(judge, calls, timeout)):
        if _timed_out(result):  # an answer too costly to judge is not paid, and is counted
            value = Unscored("timeout", f"math-verify took longer than {timeout:g} s", score=0.0)
        elif isinstance(result, Unscored):
            value = result
        elif result is None:
            value = Unscored("unscorable", "math-verify cannot read the gold answer")
        elif result in (0.0, 1.0):
            value = result
        else:
            value = Unscored("error", f"unexpected verdict {result!r}")
        for index in indices:
            scores[index] = value
