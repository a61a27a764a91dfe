"""What a reward declares for the property checks only: ``RewardChecks``, its ``Direction`` pairs and ``Measure``s.

Training never reads these; ``grpo-run check``, preflight and ``grpo_core.testing.check_reward`` do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Direction:
    """A direction property: every pair drawn must score ``better >= worse`` (``>`` if strict).

    ``pairs(params)`` returns a hypothesis strategy of ``(better, worse, columns)`` where the
    completions are plain strings and ``columns`` maps the reward's columns to values.
    It is only called by the checks, so plugins import hypothesis inside it.
    """

    description: str
    pairs: Callable[[dict], Any]
    strict: bool = False


@dataclass(frozen=True)
class Measure:
    """A check the reward's plugin measures itself and reports with its figure, e.g. how often a judge prefers the
    right answer: ``measure(reward) -> (passed, figure)``, where ``reward`` is the bound ``Reward`` (call it with
    ``reward.score(prompts=..., completions=..., **columns)``) and ``figure`` is one sentence with the count,
    e.g. ``"prefers the right answer in 27 of 50 rows (54%)"``. It runs once per check, in the checking process.
    It may return a third item, a dict that shows the failure (the completions, the columns, the scores), which the
    report prints as the counterexample. With ``rows=True`` it is called ``measure(reward, rows)``, with the rows of
    the dataset the check reads (``grpo-run check --dataset NAME``; a list of dicts of its columns) or None without one.
    ``items`` is about how many completions one measure scores: a check short of time (``grpo-run check --budget``)
    then skips a measure it could not finish instead of starting it (0: unknown, it is started and stopped at its
    share of the budget).
    """

    name: str
    measure: Callable[..., tuple]
    rows: bool = False
    items: int = 0


@dataclass(frozen=True)
class RewardChecks:
    """What a reward declares so the property checks can test it: ``RewardSpec(..., checks=RewardChecks(...))``.

    - ``directions``: ``Direction`` pairs (better, worse) that must score ``better >= worse``.
    - ``column_strategy``: ``params -> hypothesis strategy`` of valid rows, dicts of the reward's columns
      (an optional ``"prompt"`` key is the row's prompt); without it the checks draw columns as text.
    - ``gold_example``: ``(columns, params) -> completion | None``, a completion for that row that must
      score the high bound.
    - ``degenerate``: ``(prompt, columns, params) -> [(label, completion), ...]``, completions that do not do
      the task for the row (a copied question, a placeholder, padding); the checks fail the reward if one
      earns more than ``degenerate_share`` of the way from its low bound to its high bound.
    - ``row_problems``: ``(columns, params) -> [(problem, example), ...]``, what makes one dataset row unfit
      for the reward (an unreadable gold answer); preflight and ``grpo-run check`` report them as warnings.
    - ``measures``: ``Measure``s, checks the plugin counts itself and reports with a figure (a judge's agreement
      with references); a measure that does not pass fails the check.
    - ``by_name_only``: why checking every installed reward leaves this one out (it starts a server, it costs
      money); it is then checked only when named, ``grpo-run check --reward NAME``.
    - ``tolerance``: how far apart two scores of the same input may be and still count as the same score in the
      deterministic, batch-independent and shapes checks; 0 (exact, to float rounding) unless the reward computes in
      low precision, such as a neural network in float32, whose last bits change with the batch's shape.

    Every callable is called only by the checks, so import hypothesis and heavy libraries inside them.
    """

    directions: tuple[Direction, ...] = ()
    column_strategy: Callable[[dict], Any] | None = None
    gold_example: Callable[..., str | None] | None = None
    degenerate: Callable[[str, dict, dict], Any] | None = None
    degenerate_share: float = 0.5
    row_problems: Callable[[dict, dict], Any] | None = None
    measures: tuple[Measure, ...] = ()
    by_name_only: str = ""
    tolerance: float = 0.0
