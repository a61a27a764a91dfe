"""Completions that reach a length without writing it, for ``length``: padding and repetition."""

from __future__ import annotations

MIN_TARGET = 20  # below this, padding and real text are too close in length to tell apart
NEAR_REPEAT_MIN_TARGET = 100  # a near-repeat needs room for stretches of REPEAT_SPAN (32) to repeat


def degenerate_completions(prompt: str, params: dict) -> list[tuple[str, str]]:
    """(label, completion) pairs as long as the target in raw characters, with little that counts."""
    target = params["target"]
    if target < MIN_TARGET:
        return []
    short = "The answer is 42." if target >= 85 else "42."
    sentence = short + " "
    found = [
        ("empty", ""),
        ("spaces up to the target", " " * target),
        ("newlines up to the target", "\n" * target),
        ("zero-width spaces up to the target", "\u200b" * target),
        ("mixed invisible characters up to the target", ("\u200b\u200c\u200d\u2060\ufeff\u00ad \n" * target)[:target]),
        ("one character repeated", "a" * target),
        ("one word repeated", ("word " * target)[:target]),
        ("a sentence repeated", (sentence * target)[:target]),
        ("a sentence repeated on lines", ((short + "\n") * target)[:target]),
        ("a short answer padded with spaces", short + " " * (target - len(short))),
        ("a short answer padded with newlines and zero-width spaces", short + ("\n\u200b" * target)[: target - len(short)]),
        ("distinct private-use characters", "".join(chr(0xE000 + i) for i in range(target))),
        ("distinct unassigned code points", "".join(chr(0x40000 + i) for i in range(target))),
        ("Hangul fillers", ("\u3164\u115f\u1160\uffa0" * target)[:target]),
    ]
    if target >= NEAR_REPEAT_MIN_TARGET:
        clause = short.rstrip(".")
        found += [
            ("one character repeated, the last changed", "a" * (target - 1) + "b"),
            ("one word repeated, ending in another", ("word " * target)[: target - 4] + "end!"),
            ("a sentence repeated, its last character changed", ((clause + " ") * target)[: target - 1] + "X"),
        ]
    copies = target // (len(prompt) + 1)
    if prompt.strip() and copies >= 2:
        found.append(("the prompt repeated", (prompt + "\n") * copies))
    return found


def degenerate(prompt, columns: dict, params: dict) -> list[tuple[str, str]]:
    """The checks' entry point: the completions above for the row's prompt (the columns do not matter)."""
    return degenerate_completions(prompt, params)
