"""Completions that follow no real structure for ``xml-format``: the reward must pay them little.

Used by the checks (``RewardChecks.degenerate``) and the plugin's tests; no heavy imports.
"""

from __future__ import annotations

from grpo_reward_xml.reward import minimums, parse_tags

# Hangul fillers: letters to Python's \w, blank on screen.
HANGUL_FILLERS = "\u3164\u115f\u1160\uffa0"


def _structure(names: tuple[str, ...], contents: list[str]) -> str:
    return "".join(f"<{name}>{content}</{name}>" for name, content in zip(names, contents))


def degenerate_completions(prompt: str, params: dict) -> list[tuple[str, str]]:
    """(label, completion) pairs that do not fill the configured structure with real text."""
    layout = parse_tags(params["tags"])
    names, k = layout.names, len(layout.names)
    needs = minimums(layout, params["min_chars"], params["min_answer_chars"])
    shuffled = layout.markers[1::2] + layout.markers[0::2]  # closing tags first, then the openings
    found = [
        ("empty", ""),
        ("whitespace only", " \n\t \n"),
        ("the prompt copied back", prompt),
        ("the structure with nothing inside", _structure(names, [""] * k)),
        ("'.' inside every element", _structure(names, ["."] * k)),
        ("'...' inside every element", _structure(names, ["..."] * k)),
        ("a zero-width space inside every element", _structure(names, ["\u200b"] * k)),
        ("invisible characters inside every element", _structure(names, ["\u200b\u200c\u200d\u2060\ufeff\u00ad"] * k)),
        ("whitespace padding inside every element", _structure(names, [" " * 100 + "\n" * 100] * k)),
        ("Hangul fillers inside every element", _structure(names, [HANGUL_FILLERS * 25] * k)),
        ("U+3164 inside every element", _structure(names, ["\u3164" * 12] * k)),
        ("underscores inside every element", _structure(names, ["_" * 100] * k)),
        ("bare tags in shuffled order", "".join(shuffled)),
        ("bare tags repeated", "".join(layout.markers) * 20),
    ]
    if max(needs) > 1:  # an element that needs one character is filled by any letter or digit
        found += [
            ("one letter repeated where more than one is needed",
             _structure(names, ["a" * need if need > 1 else "" for need in needs])),
            ("one digit repeated where more than one is needed, with spaces",
             _structure(names, ["7 " * need if need > 1 else "" for need in needs])),
        ]
    if params["prefilled"]:  # the chat template wrote the first opening tag already
        first = layout.markers[0]
        found = [(label, text[len(first):] if text.startswith(first) else text) for label, text in found]
    return found


def degenerate(prompt: str, columns: dict, params: dict) -> list[tuple[str, str]]:
    """``degenerate_completions`` as ``RewardChecks.degenerate`` calls it: the reward reads no column."""
    return degenerate_completions(prompt, params)
