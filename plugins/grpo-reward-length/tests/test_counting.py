"""What counts toward the length: visible text, whitespace runs once, repetition once, graphemes as one."""

import pytest

from grpo_core.testing import call_reward
from grpo_reward_length import SPEC, length_reward, text_of_length
from grpo_reward_length.counting import counted_units, effective_length

ANSWER = "The answer is 42 because 6 times 7 is 42."


@pytest.mark.parametrize("text, expected", [
    ("", 0),
    (" " * 200, 0),
    ("\n" * 200, 0),
    ("\u200b" * 200, 0),
    ("\u200b\u200c\u200d\u2060\ufeff\u00ad\u3164\u2800\x00\x1b", 0),
    ("a" * 200, 1),
    ("ha" * 50, 2),
    ("word " * 40, 4),
    ("Go on. Go on. Go", 6),
    ("This step restates what was said before. " * 2 + "This step restates", 40),
    ("word word", 4),
    ("The answer is 42. " * 12, 17),
    ("The answer is 42.\n" * 12, 17),
    (ANSWER + " " * 160, len(ANSWER)),
    ("  two   spaces\t\tand\n\n tabs  ", len("two spaces and tabs") + 0),
    ("First line.\nSecond line.", len("First line.") + 1 + len("Second line.")),
    ("Yes. No. Yes. No.", len("Yes. No.")),
    ("abcab", 3),
    ("that is that", 12),
    ("e\u0301", 1),  # a letter and a combining accent: one character
    ("\U0001F44D\U0001F3FD", 1),  # thumbs up with a skin tone
    ("\U0001F1EB\U0001F1F7", 1),  # a flag
    ("\r\n".join(["one", "two"]), len("one two")),
])
def test_effective_length(text, expected):
    assert effective_length(text) == expected


def test_words_of_a_real_answer_all_count():
    assert effective_length(ANSWER) == len(ANSWER)
    assert counted_units("Step one. Step two. Step one.") == ["Step one.", "Step two."]


@pytest.mark.parametrize("n", [0, 1, 7, 50, 200, 999])
def test_text_of_length_counts_exactly(n):
    assert effective_length(text_of_length(n)) == n


def test_padding_never_reaches_the_target():
    # With target 200 each of these scored 1.0 when raw characters were counted.
    padded = {
        "200 spaces": " " * 200,
        "200 newlines": "\n" * 200,
        "200 zero-width spaces": "\u200b" * 200,
        "one character repeated": "a" * 200,
        "a repeated sentence": ("The answer is 42. " * 12)[:200],
        "a short answer padded with spaces": ANSWER + " " * (200 - len(ANSWER)),
    }
    for label, text in padded.items():
        assert len(text) == 200, label
        assert length_reward(text, target=200) <= 0.25, label
    assert length_reward(text_of_length(200), target=200) == 1.0


def test_huge_inputs_stay_fast_and_bounded():
    import time

    started = time.monotonic()
    for text in ("x" * 1_000_000, "ab. " * 250_000, "\u00e9" * 1_000_000, "\u200b" * 1_000_000):
        assert 0.0 <= length_reward(text, target=200) <= 1.0
    assert time.monotonic() - started < 30  # a generous ceiling; the benchmark measures the real cost


@pytest.mark.parametrize("shape", ["linear", "reciprocal", "exponential"])
@pytest.mark.parametrize("target", [20, 50, 100, 200, 400, 2000])
@pytest.mark.parametrize("unit", ["chars", "tokens"])
def test_degenerate_completions_score_at_most_the_declared_share(shape, target, unit):
    params = SPEC.resolve({"target": target, "shape": shape, "unit": unit})
    low, high = SPEC.bounds
    ceiling = low + SPEC.checks.degenerate_share * (high - low)
    for prompt in ("What is 4 + 18?", "Write a short story about a lighthouse keeper."):
        declared = SPEC.checks.degenerate(prompt, {}, params)
        assert len(declared) >= 11
        scores = call_reward(SPEC, [text for _, text in declared], params=params, prompts=[prompt] * len(declared))
        paid = {label: round(score, 3) for (label, _), score in zip(declared, scores) if score > ceiling}
        assert paid == {}


def test_short_targets_declare_nothing():
    assert SPEC.checks.degenerate("p", {}, SPEC.resolve({"target": 19})) == []
