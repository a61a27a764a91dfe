"""Unscored: what a reward returns for an item it could not score, and why (kept apart so the worker
pool can return it without importing the Reward callable)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unscored:
    """What a reward returns for an item it could not score (per item, or in a batch), so the run counts why.

    ``reason`` is ``"timeout"``, ``"error"`` or ``"unscorable"`` (the item cannot be judged, e.g.
    its gold answer is unreadable); ``detail`` says more. The item is counted in
    ``rewards/<name>/timeouts``, ``/errors`` or ``/unscorable``, and TRL receives ``score``: None
    unless the reward gives such items a fixed score (e.g. 0.0 for an answer too costly to judge).
    """

    reason: str
    detail: str = ""
    score: float | None = None

    def __post_init__(self) -> None:
        if self.reason not in ("timeout", "error", "unscorable"):
            raise ValueError(f"Unscored reason must be 'timeout', 'error' or 'unscorable', got {self.reason!r}")
