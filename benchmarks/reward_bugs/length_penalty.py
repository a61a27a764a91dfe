"""Length and repetition rewards and penalties, with TRL's signature. Lengths are in characters (no tokenizer).

See math_answer.py for what META holds. The buggy ones are wrong on purpose.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction


def _text(completion) -> str:
    """The text of a completion in either shape TRL passes: a string, or a list of chat messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(str(m.get("content") or "") for m in completion if isinstance(m, dict))
    return str(completion)


def _tag_body(text: str, tag: str = "answer") -> str | None:
    i = text.find(f"<{tag}>")
    j = text.find(f"</{tag}>", i + 2 + len(tag)) if i >= 0 else -1
    if i < 0 or j < 0 or text.count(f"<{tag}>") != 1:
        return None
    return text[i + len(tag) + 2:j]


def _right(text: str, gold) -> bool:
    body = _tag_body(text)
    if body is None or not re.fullmatch(r"\s*[-+]?\d{1,30}(\.\d{1,30})?\s*", body):
        return False
    return re.fullmatch(r"-?\d{1,30}", str(gold).strip()) is not None and Fraction(body.strip()) == int(str(gold))


def _ngram_repeat_share(text: str, n: int = 3) -> float:
    """Share of word n-grams that repeat an earlier one (0 for text with fewer than n words)."""
    words = text.lower().split()
    grams = [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    if not grams:
        return 0.0
    return 1.0 - len(set(grams)) / len(grams)


# ---------------------------------------------------------------- buggy


def length_target_wrong_sign(completions, target: int = 300, **kwargs) -> list[float]:
    """Meant to pay closeness to the target length, written as abs(target - len) / target: it pays distance."""
    completions = [_text(c) for c in completions]
    return [min(1.0, abs(target - len(c)) / target) for c in completions]


def pays_length(completions, **kwargs) -> list[float]:
    """'Thoroughness' bonus: one point per 1000 characters, up to 1."""
    completions = [_text(c) for c in completions]
    return [min(1.0, len(c) / 1000) for c in completions]


def repetition_wrong_sign(completions, **kwargs) -> list[float]:
    """open-r1's repetition penalty with the sign dropped: the share of repeated 3-grams is paid, not charged."""
    completions = [_text(c) for c in completions]
    return [_ngram_repeat_share(c) for c in completions]


def dapo_overlong_wrong_sign(completions, max_len: int = 512, cache: int = 128, **kwargs) -> list[float]:
    """DAPO soft overlong punishment returning the penalty's size instead of its negative (bounds (-1, 0))."""
    completions = [_text(c) for c in completions]
    scores = []
    for c in completions:
        n = len(c)
        if n <= max_len - cache:
            scores.append(0.0)
        elif n <= max_len:
            scores.append((n - (max_len - cache)) / cache)
        else:
            scores.append(1.0)
    return scores


def cosine_brevity_unclamped(completions, max_len: int = 500, **kwargs) -> list[float]:
    """Brevity on a cosine schedule without clamping len/max_len: at twice max_len the score climbs back to 1."""
    completions = [_text(c) for c in completions]
    return [0.5 * (1.0 + math.cos(math.pi * len(c) / max_len)) for c in completions]


dapo_overlong_wrong_sign.bounds = (-1, 0)

# ---------------------------------------------------------------- sound


def dapo_soft_overlong(completions, max_len: int = 512, cache: int = 128, **kwargs) -> list[float]:
    """DAPO's soft overlong punishment: 0 up to max_len - cache, then down linearly to -1 at max_len, -1 beyond."""
    completions = [_text(c) for c in completions]
    scores = []
    for c in completions:
        n = len(c)
        if n <= max_len - cache:
            scores.append(0.0)
        elif n <= max_len:
            scores.append(((max_len - cache) - n) / cache)
        else:
            scores.append(-1.0)
    return scores


def brevity_for_correct(completions, answer, **kwargs) -> list[float]:
    """A right answer earns 1.0 less up to 0.5 for length (2000 characters and more); a wrong one earns 0."""
    completions = [_text(c) for c in completions]
    return [1.0 - 0.5 * min(1.0, len(c) / 2000) if _right(c, a) else 0.0 for c, a in zip(completions, answer)]


def repetition_penalty(completions, **kwargs) -> list[float]:
    """open-r1's repetition penalty: minus the share of repeated word 3-grams (bounds (-1, 0))."""
    completions = [_text(c) for c in completions]
    return [-_ngram_repeat_share(c) for c in completions]


dapo_soft_overlong.bounds = (-1, 0)
repetition_penalty.bounds = (-1, 0)

META = {
    "length_target_wrong_sign": dict(
        category="length/penalty",
        bug="abs(target - len) / target without the minus: the farther from the target the better",
        source="length-target rewards (issue threads on sign errors)", expected_property="degenerate",
        also=["direction"], dataset="arithmetic"),
    "pays_length": dict(
        category="length/penalty", bug="pays length: 1000 characters of padding earn the top",
        source="verbosity bonuses", expected_property="degenerate", also=[], dataset="arithmetic"),
    "repetition_wrong_sign": dict(
        category="length/penalty", bug="repetition penalty with the sign dropped: repeating text is paid",
        source="open-r1 get_repetition_penalty_reward with the sign lost", expected_property="degenerate",
        also=["direction", "penalty"], dataset="arithmetic"),
    "dapo_overlong_wrong_sign": dict(
        category="length/penalty", bug="returns +penalty (up to +1) with declared bounds (-1, 0)",
        source="DAPO paper soft overlong punishment, sign error", expected_property="bounds",
        also=["gold-bounds", "degenerate", "penalty", "hostile"], dataset="arithmetic"),
    "cosine_brevity_unclamped": dict(
        category="length/penalty",
        bug="cos(pi * len / max_len) not clamped: 1000 characters of padding score 1.0 again",
        source="TRL/open-r1 get_cosine_scaled_reward (TRL clamps; the unclamped form from issue threads)",
        expected_property="degenerate", also=["direction"], dataset="arithmetic"),
    "dapo_soft_overlong": dict(
        category="length/penalty",
        bug=None, source="DAPO paper soft overlong punishment (TRL get_soft_overlong_punishment)",
        dataset="arithmetic"),
    "brevity_for_correct": dict(
        category="length/penalty", bug=None, source="length-scaled correctness (Demystifying long CoT, simplified)",
        dataset="arithmetic", verifier=True),
    "repetition_penalty": dict(
        category="length/penalty", bug=None, source="open-r1 get_repetition_penalty_reward (3-grams, words)",
        dataset="arithmetic"),
}
