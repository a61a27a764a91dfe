"""The ``math`` reward: 1.0 when the completion's final answer equals the gold answer, else 0.0.

Two tiers. Plain numbers (the gold answer and the prediction both) are compared in-process
by grpo_core.numbers (public as grpo_core.parse_number and grpo_core.same_number). Everything else (LaTeX, expressions, sets, intervals, matrices)
goes to math-verify in grpo_core's worker pool, all the batch's items at once, each under a
hard deadline that holds from any thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from grpo_core import Unscored, completion_text

from grpo_reward_math.extract import has_markup, last_boxed, last_number, prose_number, tag_content
from grpo_core.numbers import Number, parse_plain_number, same_number
from grpo_reward_math.symbolic import MAX_TEXT

EXTRACT_MODES = ("auto", "answer-tag", "boxed", "last-number")
WARM_UP_SECONDS = 120.0  # allowance for a cold worker to import math-verify and sympy
MAX_SPAN = 10_000  # a tag or box longer than this that is not a plain number is not an answer


@dataclass(frozen=True)
class _Symbolic:
    """A prediction only math-verify can judge: a cut-out ``span`` or a whole ``text``."""

    kind: str
    payload: str


def read_gold(raw) -> Number | str | None:
    """The gold answer as a plain Number, as text for math-verify, or None when there is none.

    A gsm8k-style solution is reduced to what follows its last ``####``.
    """
    if raw is None or isinstance(raw, bool):
        return None
    if isinstance(raw, float) and raw != raw:  # NaN: a missing value in a pandas-made column
        return None
    text = str(raw).strip()
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip()
    if not text:
        return None
    number = parse_plain_number(text)
    return number if number is not None else text


def find_answer(text: str, extract: str = "auto", tag: str = "answer"):
    """Where the prediction is: ``("span", str)``, ``("number", Number | None)``, ``("text", str)`` or None.

    ``auto`` tries the ``<tag>`` first, then the last ``\\boxed{}``, then the whole text.
    """
    if extract in ("auto", "answer-tag"):
        span = tag_content(text, tag)
        if span is not None:
            return "span", span
        if extract == "answer-tag":
            return None
    if extract in ("auto", "boxed"):
        span = last_boxed(text)
        if span is not None:
            return "span", span
        if extract == "boxed":
            return None
    if extract == "last-number":
        return "number", last_number(text)
    return "text", text


def judge_fast(gold: Number | str, candidate) -> float | _Symbolic:
    """The score when the fast path can decide it, else what to send to the symbolic tier."""
    if candidate is None:
        return 0.0
    kind, value = candidate
    if kind == "number":
        if value is None:
            return 0.0
        if isinstance(gold, Number):
            return float(same_number(gold, value))
        return _Symbolic("span", value.latex())
    if kind == "span":
        if not value.strip():
            return 0.0
        if isinstance(gold, Number):
            number = parse_plain_number(value)
            if number is not None:
                return float(same_number(gold, number))
        if len(value) > MAX_SPAN:
            return 0.0
        return _Symbolic("span", value)
    # A whole text: plain prose against a numeric gold is read in-process (anchored or last number),
    # which is what math-verify's expression extraction finds in text without LaTeX.
    if isinstance(gold, Number) and not has_markup(value):
        number = prose_number(value)
        return 0.0 if number is None else float(same_number(gold, number))
    return _Symbolic("text", value[-MAX_TEXT:])


def math_reward(completions, answer, *, answer_column="answer", extract="auto", tag="answer", timeout=5.0):
    """Score a batch: 1.0 correct, 0.0 wrong or missing, None where the gold answer cannot be read.

    ``completions`` are texts (or TRL completions); ``answer`` holds the gold answers, one per
    completion. A prediction that math-verify cannot judge within ``timeout`` seconds scores 0.0,
    as ``Unscored("timeout", score=0.0)`` so the run counts it; an item whose judging fails outright
    is ``Unscored("error")`` (None). Never raises on odd input.
    """
    completions = list(completions)
    answers = list(answer)
    scores: list[float | None] = [None] * len(completions)
    golds: dict[str, Number | str | None] = {}
    waiting: list[tuple[int, Number | str, _Symbolic]] = []
    for index, (completion, raw_gold) in enumerate(zip(completions, answers)):
        try:
            key = raw_gold if isinstance(raw_gold, str) else repr(raw_gold)
            if key not in golds:
                golds[key] = read_gold(raw_gold)
            gold = golds[key]
            if gold is None:
                continue
            outcome = judge_fast(gold, find_answer(completion_text(completion), extract, tag))
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


def _judge_symbolic(waiting, scores, timeout) -> None:
    from grpo_core.timeout import TIMEOUT, Failure, get_pool

    from grpo_reward_math.symbolic import gold_parses, judge, warm_up

    pool = get_pool()
    # A worker replaced after a timeout starts cold; importing sympy must not eat an item's deadline.
    pool.map(warm_up, [((), {})] * pool.size, max(WARM_UP_SECONDS, timeout))
    # Gold answers first, so that a gold math-verify cannot read gives None rather than 0.0.
    symbolic_golds = sorted({gold for _, gold, _ in waiting if isinstance(gold, str)})
    readable = set()
    unread: dict[str, Unscored] = {}  # gold answers math-verify could not read in time, or that broke it
    if symbolic_golds:
        results = pool.map(gold_parses, [((gold,), {}) for gold in symbolic_golds], timeout)
        readable = {gold for gold, ok in zip(symbolic_golds, results) if ok is True}
        for gold, result in zip(symbolic_golds, results):
            if result is TIMEOUT:
                unread[gold] = Unscored("timeout", f"reading the gold answer took longer than {timeout:g} s")
            elif isinstance(result, Failure):
                unread[gold] = Unscored("error", result.error)
        if any(result is TIMEOUT for result in results):
            pool.map(warm_up, [((), {})] * pool.size, max(WARM_UP_SECONDS, timeout))
    unique: dict[tuple, list[int]] = {}  # identical (gold, answer) items, common within a GRPO group, run once
    for index, gold, item in waiting:
        if isinstance(gold, str) and gold not in readable:
            scores[index] = unread.get(gold)
            continue
        gold_text = gold if isinstance(gold, str) else gold.latex()
        unique.setdefault((gold_text, item.kind, item.payload), []).append(index)
    if not unique:
        return
    calls = [(key, {}) for key in unique]
    for indices, result in zip(unique.values(), pool.map(judge, calls, timeout)):
        if result is TIMEOUT:  # an answer too costly to judge is not paid, and is counted
            value = Unscored("timeout", f"math-verify took longer than {timeout:g} s", score=0.0)
        elif isinstance(result, Failure):
            value = Unscored("error", result.error)
        elif result not in (None, 0.0, 1.0):
            value = Unscored("error", f"math-verify returned {result!r}")
        else:
            value = result
        for index in indices:
            scores[index] = value
