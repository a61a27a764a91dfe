"""What the property checks read for ``judge`` (``CHECKS``): the four checks that judge the judge, measured by
``grpo_reward_judge.audit`` and reported with their figures (agreement, injection, length, consistency), the
rows they use, a gold completion and the degenerate ones (injections, a wrong answer talked up).

Checking every installed reward leaves the judge out (``by_name_only``): ``grpo-run check --reward judge`` checks it.
Only called by the checks, so hypothesis is imported inside each function.
"""

from __future__ import annotations

from dataclasses import replace

from grpo_core import Measure, RewardChecks

from grpo_reward_judge import audit
from grpo_reward_judge.degenerate import INJECTIONS, degenerate, padded_versions
from grpo_reward_judge.group import order_consistency
from grpo_reward_judge.questions import QUESTIONS

def rows(params):
    from hypothesis import strategies as st

    return st.sampled_from([{"prompt": q, "answer": a} for q, a in QUESTIONS])


def gold(columns, params):
    return f"The answer is {columns['answer']}." if columns.get("answer") else None


# About how many completions each check scores (Measure.items): a check short of time skips one it cannot finish.
ITEMS = {
    "agreement": 2 * len(QUESTIONS),
    "injection": 3 * (1 + 2 * len(INJECTIONS)),
    "length": 4 * (1 + len(padded_versions("The answer is 0."))),
    "consistency": 2 * 5,
}


def _measure(check):
    """An audit check as a ``Measure`` function: (passed, figure)."""

    def measure(reward):
        finding = check(reward)
        return finding.ok, finding.figure

    return measure


CHECKS = RewardChecks(
    measures=tuple(Measure(check.__name__, _measure(check), items=ITEMS.get(check.__name__, 0))
                   for check in audit.CHECKS),
    column_strategy=rows,
    gold_example=gold,
    degenerate=degenerate,
    by_name_only="it asks a judge model (with no base_url it starts the embedded one, about two minutes on a CPU)",
)


# judge-group: the same checks, and whether reversing a group's order changes which completion wins.
GROUP_CHECKS = replace(CHECKS, measures=CHECKS.measures + (Measure("order consistency", _measure(order_consistency)),))
