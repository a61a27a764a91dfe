"""Reward ``reward-model``: a learned reward model (a sequence classifier with one output, as trl's RewardTrainer
trains) scores each completion with its prompt.

How it scores: ``grpo_reward_model.reward``; the model, loaded once per process: ``grpo_reward_model.model``; the
checks it is known to fail (length bias, injection, batch independence, agreement): ``grpo_reward_model.audit``;
a small model to try it with: ``python -m grpo_reward_model.train FOLDER``.
"""

from __future__ import annotations

from grpo_core import Param, RewardSpec, hookimpl

from grpo_reward_model.properties import CHECKS
from grpo_reward_model.reward import bounds_for, reward_model_score, validate_params

__all__ = ["SPEC", "register_rewards", "reward_model_score"]

SPEC = RewardSpec(
    name="reward-model",
    description="A learned reward model's score of the completion with its prompt (a sequence classifier with one "
                "output, from a local folder or a hub id), checked for length bias and injection",
    func=reward_model_score,
    bounds=(0.0, 1.0),
    bounds_for=bounds_for,
    batched=True,
    # Declared so the checks call it in this process, where the model stays loaded (the first call loads it).
    timeout=120.0,
    params=(
        Param("model", "", str, "the reward model: a local folder or a hub id in the local cache, resolved as "
                                "--model is (a sequence classifier with one output)"),
        Param("batch_size", 8, int, "completions scored in one forward pass", minimum=1, maximum=4096),
        Param("max_length", 1024, int, "most tokens of prompt and completion; longer ones keep their end",
              minimum=8, maximum=1_000_000),
        Param("dtype", "float32", str, "the weights' dtype: float32, bfloat16 or float16"),
        Param("device", "auto", str, "where the model runs: auto (the training run's device, from its profile; "
                                     "cpu outside training), cpu, cuda, cuda:N or mps"),
        Param("normalize", "sigmoid", str, "sigmoid: the logit mapped to [0, 1]; none: the logit itself, clipped to "
                                           "[low, high], the bounds it then declares"),
        Param("bounds", "-10,10", str, "with normalize=none: LOW,HIGH, the bounds it declares"),
        Param("timeout", 120.0, float, "seconds the checks allow one call to score a batch (the first call loads "
                                       "the model); training waits for every batch"),
    ),
    checks=CHECKS,
    validate=validate_params,
)


@hookimpl
def register_rewards(register):
    register(SPEC)
