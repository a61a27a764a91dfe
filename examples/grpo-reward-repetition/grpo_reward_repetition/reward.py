"""How ``repetition`` scores: distinct n-grams over all n-grams of the completion's words or characters."""

from __future__ import annotations

UNITS = ("words", "chars")


def tokens(completion: str, unit: str = "words", lowercase: bool = True) -> list[str]:
    """The completion as the units n-grams are made of: whitespace-separated words, or characters."""
    if lowercase:
        completion = completion.casefold()
    return completion.split() if unit == "words" else list(completion)


def repetition(completion, *, n=3, unit="words", lowercase=True):
    """Distinct n-grams over all n-grams: 1.0 when no n-gram repeats, near 0 for a long loop."""
    units = tokens(completion, unit, lowercase)
    total = len(units) - n + 1
    if total <= 0:
        return 1.0  # too short to repeat anything
    distinct = len(set(zip(*(units[i:] for i in range(n)))))
    return distinct / total


def validate_params(params):
    if params["n"] < 1:
        raise ValueError(f"n must be 1 or more, got {params['n']}")
