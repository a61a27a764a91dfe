"""What the property checks read for ``reward-model`` (``CHECKS``): the checks a learned reward is known to fail
(length bias, injection, batch independence, and agreement with a dataset's labelled pairs), measured by
``grpo_reward_model.audit`` and reported with their figures and counterexamples; the rows the generic properties
(determinism, hostile text, ...) draw; the completions it must not pay.

Checking every installed reward leaves it out (``by_name_only``): it needs a model,
``grpo-run check --reward reward-model --reward-arg reward-model.model=FOLDER``.
Only called by the checks, so hypothesis is imported inside each function.
"""

from __future__ import annotations

from grpo_core import Measure, RewardChecks

from grpo_reward_model import audit
from grpo_reward_model.degenerate import degenerate


def rows(params):
    from hypothesis import strategies as st

    return st.sampled_from([{"prompt": question, "answer": str(right)} for question, right, _ in audit.QUESTIONS])


CHECKS = RewardChecks(
    measures=(
        Measure("length bias", audit.length),
        Measure("injection", audit.injection),
        Measure("batch independence", audit.batch_independence),
        Measure("agreement", audit.agreement, rows=True),
    ),
    column_strategy=rows,
    degenerate=degenerate,
    by_name_only="it needs a reward model: --reward-arg reward-model.model=FOLDER",
    # float32 sums come out in another order with the batch's shape: the last bits of a score change with it
    tolerance=1e-5,
)
