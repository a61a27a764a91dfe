"""Environment ``retry``: any installed reward as a ``submit(answer)`` tool that says right or wrong, a few tries per
episode, the pay smaller for each wrong try before the right one. It makes any dataset and reward multi-turn.

How an answer is scored and the episode paid: ``grpo_env_retry.environment``. Importing this module is cheap: the
wrapped reward is loaded when an instance is made.
"""

from __future__ import annotations

from grpo_core import EnvironmentSpec, Param, hookimpl

from grpo_env_retry.environment import DEFAULT_SECONDS, MAX_TRIES, Retry, gold_episode

__all__ = ["ENVIRONMENT", "Retry", "gold_episode", "register_environments"]

ENVIRONMENT = EnvironmentSpec(
    name="retry",
    description="Any reward as a submit(answer) tool that says right or wrong; decay^(wrong tries) for a right "
    "answer, 0 without one",
    factory=Retry,
    params=(
        Param("reward", "math", str, "the installed reward that judges a submitted answer (right: its high bound)"),
        Param("tries", 3, int, "answers an episode may submit; later submits are refused and not scored",
              minimum=1, maximum=MAX_TRIES),
        Param("decay", 0.5, float, "pay kept for each wrong try before the right one: 1, 0.5, 0.25 for a right "
                                   "first, second, third try", minimum=0.0, maximum=1.0),
        Param("reward_args", None, str, "parameters of the wrapped reward, KEY=VALUE joined by commas, e.g. "
                                        "allow_expressions=false"),
        Param("seconds", DEFAULT_SECONDS, float, "the longest one answer may take to judge: a wrapped reward with a "
              "timeout parameter gets this one unless reward_args sets it; an answer not judged in time uses no try",
              minimum=0.1, maximum=60.0),
    ),
    columns=("answer",),  # what the default reward, math, reads; another reward's columns are checked at reset
    bounds=(0.0, 1.0),
    gold_episode=gold_episode,
)


@hookimpl
def register_environments(register):
    register(ENVIRONMENT)
