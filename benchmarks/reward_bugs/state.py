"""Rewards with state across calls (or across the batch), with TRL's signature.

See math_answer.py for what META holds. The buggy ones are wrong on purpose.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction


def _text(completion) -> str:
    """The text of a completion in either shape TRL passes: a string, or a list of chat messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(str(m.get("content") or "") for m in completion if isinstance(m, dict))
    return str(completion)


def _answer_value(text: str):
    """The one number in the one answer tag, else None."""
    i = text.find("<answer>")
    j = text.find("</answer>", i + 8) if i >= 0 else -1
    if i < 0 or j < 0 or text.count("<answer>") != 1:
        return None
    body = text[i + 8:j]
    if not re.fullmatch(r"\s*[-+]?\d{1,30}(\.\d{1,30})?\s*", body):
        return None
    return Fraction(body.strip())


def _right(text: str, gold) -> bool:
    value = _answer_value(text)
    return value is not None and re.fullmatch(r"-?\d{1,30}", str(gold).strip()) is not None and value == int(str(gold))


# ---------------------------------------------------------------- buggy

_SEEN: dict[str, int] = {}


def global_repeat_discount(completions, answer, **kwargs) -> list[float]:
    """Discounts a completion seen before, in any call: 1 / (times seen), 'to favour diverse answers'."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        _SEEN[c] = _SEEN.get(c, 0) + 1
        scores.append((1.0 if _right(c, a) else 0.0) / _SEEN[c])
    return scores


_BY_GOLD: dict[str, float] = {}


def cache_keyed_by_gold(completions, answer, **kwargs) -> list[float]:
    """Caches the score under the gold answer only: every later completion for that gold gets the first score."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        if a not in _BY_GOLD:
            _BY_GOLD[a] = 1.0 if _right(c, a) else 0.0
        scores.append(_BY_GOLD[a])
    return scores


_BY_TEXT: dict[str, float] = {}


def cache_keyed_by_completion(completions, answer, **kwargs) -> list[float]:
    """Caches the score under the completion text only: the same text for another question reuses it."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        if c not in _BY_TEXT:
            _BY_TEXT[c] = 1.0 if _right(c, a) else 0.0
        scores.append(_BY_TEXT[c])
    return scores


def batch_max_normalized(completions, answer, **kwargs) -> list[float]:
    """Divides by the batch's best raw score (group-relative without saying so): a right answer alone earns 1,
    next to a 'better' one less."""
    completions = [_text(c) for c in completions]
    raw = [(1.0 if _right(c, a) else 0.0) + 0.1 * min(1.0, len(c) / 500) for c, a in zip(completions, answer)]
    best = max(raw) if raw else 0.0
    return [r / best if best > 0 else 0.0 for r in raw]


def first_correct_bonus(completions, answer, **kwargs) -> list[float]:
    """0.5 extra for the first right answer of the batch."""
    completions = [_text(c) for c in completions]
    scores, bonus_given = [], False
    for c, a in zip(completions, answer):
        right = _right(c, a)
        scores.append((0.5 if right else 0.0) + (0.5 if right and not bonus_given else 0.0))
        bonus_given = bonus_given or right
    return scores


_HISTORY: list[float] = []


def running_mean_baseline(completions, answer, **kwargs) -> list[float]:
    """Subtracts the running mean of every score given so far (a baseline kept in a global)."""
    completions = [_text(c) for c in completions]
    raw = [1.0 if _right(c, a) else 0.0 for c, a in zip(completions, answer)]
    baseline = sum(_HISTORY) / len(_HISTORY) if _HISTORY else 0.0
    _HISTORY.extend(raw)
    return [min(1.0, max(0.0, r - baseline + 0.5)) for r in raw]


def mutable_default_dedupe(completions, answer, seen=[], **kwargs) -> list[float]:  # noqa: B006 (the bug)
    """Pays a right answer once: a 'seen' list default, shared by every call, remembers it forever."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        key = (c, a)
        scores.append(1.0 if _right(c, a) and key not in seen else 0.0)
        seen.append(key)
    return scores


# ---------------------------------------------------------------- sound


@functools.lru_cache(maxsize=4096)
def _cached_right(text: str, gold: str) -> bool:
    return _right(text, gold)


def memoized_pure(completions, answer, **kwargs) -> list[float]:
    """A cache done right: keyed by (completion, gold), on a pure function."""
    completions = [_text(c) for c in completions]
    return [1.0 if _cached_right(c, str(a)) else 0.0 for c, a in zip(completions, answer)]


META = {
    "global_repeat_discount": dict(
        category="state", bug="a module-level counter discounts completions seen in earlier calls",
        source="diversity bonuses with a global dict (issue threads)", expected_property="state",
        also=["deterministic", "batch-independent"], dataset="arithmetic", verifier=True),
    "cache_keyed_by_gold": dict(
        category="state",
        bug="cache keyed by the gold answer only: after one wrong answer, a right one scores 0 (and back)",
        source="memoized verifiers keyed by the reference", expected_property="state",
        also=["deterministic", "batch-independent"], dataset="arithmetic", verifier=True),
    "cache_keyed_by_completion": dict(
        category="state", bug="cache keyed by the completion only: the same text for another row reuses a stale score",
        source="memoized verifiers keyed by the completion", expected_property="state",
        also=["deterministic", "batch-independent"], dataset="arithmetic", verifier=True),
    "batch_max_normalized": dict(
        category="state", bug="divides by the batch's best score: a completion's score depends on its batch",
        source="group normalization inside the reward", expected_property="batch-independent",
        also=["state"], dataset="arithmetic", verifier=True),
    "first_correct_bonus": dict(
        category="state", bug="the first right answer of a batch gets a bonus: order and batch change scores",
        source="'first solver' bonuses", expected_property="batch-independent",
        also=["state"], dataset="arithmetic", verifier=True),
    "running_mean_baseline": dict(
        category="state",
        bug="subtracts a running mean kept in a global: the same completion scores differently over time",
        source="baselines inside the reward", expected_property="state",
        also=["deterministic", "batch-independent"], dataset="arithmetic", verifier=True),
    "mutable_default_dedupe": dict(
        category="state",
        bug="a mutable default list remembers every (completion, gold): a right answer pays once ever",
        source="Python mutable default argument", expected_property="state",
        also=["deterministic", "batch-independent"], dataset="arithmetic", verifier=True),
    "memoized_pure": dict(
        category="state", bug=None, source="functools.lru_cache keyed by (completion, gold)", dataset="arithmetic",
        verifier=True),
}
