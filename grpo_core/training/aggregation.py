"""What the run's rewards add up to: each reward's declared range, and a warning when one range swamps the others.

TRL's ``multi_objective_aggregation`` is ``sum_then_normalize`` by default: the weighted rewards are summed, then
the sum is normalized within each group, so a reward whose weighted range is ten times another's decides the
advantages almost alone. ``normalize_then_sum`` (GDPO) normalizes each reward within its group first.
"""

from __future__ import annotations

from fractions import Fraction

from grpo_core.settings.grpo_fields import grpo_defaults

SUM_FIRST, NORMALIZE_FIRST = "sum_then_normalize", "normalize_then_sum"
DOMINANCE_FACTOR = 3  # weighted ranges further apart than this: the widest decides the advantages


def aggregation(grpo: dict) -> str:
    """The run's ``multi_objective_aggregation``: as set, else TRL's default."""
    return str(grpo.get("multi_objective_aggregation") or grpo_defaults().get("multi_objective_aggregation")
               or SUM_FIRST)


def aggregation_lines(rewards, grpo: dict) -> list[str]:
    """The lines shown before training: the rewards' ranges (with more than one reward) and, where the widest range
    is over ``DOMINANCE_FACTOR`` times the narrowest and the rewards are summed first, a warning. Weights do not
    count: they say how much each reward should weigh, and the ranges are what bends that when summing first."""
    if len(rewards) < 2:
        return []
    method = aggregation(grpo)
    ranges = ", ".join(f"{r.__name__} [{_number(r.spec.bounds[0])}, {_number(r.spec.bounds[1])}]"
                       + (f" x{_number(r.weight)}" if r.weight != 1 else "") for r in rewards)
    lines = [f"rewards: {ranges}; multi_objective_aggregation={method}"]
    spans = [(_decimal(r.spec.bounds[1]) - _decimal(r.spec.bounds[0]), r) for r in rewards if r.weight > 0]
    if method != SUM_FIRST or len(spans) < 2:
        return lines
    (narrow, least), (wide, most) = min(spans, key=lambda s: s[0]), max(spans, key=lambda s: s[0])
    if wide > DOMINANCE_FACTOR * narrow:
        lines.append(
            f"warning: reward '{most.__name__}' ranges over {_number(wide)}, over {DOMINANCE_FACTOR} times "
            f"'{least.__name__}' ({_number(narrow)}), so summed first it dominates every advantage whatever the "
            f"weights; normalize each reward on its own with --set multi_objective_aggregation={NORMALIZE_FIRST}"
        )
    return lines


def _decimal(value) -> Fraction:
    """A bound as the decimal it was written as, exactly: (0, 0.9) is three times (0, 0.3), not a hair over."""
    return Fraction(repr(float(value)))


def _number(value) -> str:
    return f"{float(value):g}"
