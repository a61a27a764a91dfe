"""The bound of every numeric setting, in one place: the ``train`` flags, ``--set`` and config files all check
their values here, so ``--max-steps 0``, ``--set max_steps=0`` and ``max_steps: 0`` are refused alike."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Bound:
    """The values a number may take: ``low``/``high`` (inclusive unless ``*_open``), what it means, an example."""

    meaning: str
    example: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    whole_above_one: bool = False  # TRL's *_steps: below 1 a fraction of the run, from 1 on a count of steps

    def rule(self) -> str:
        low = None if self.low is None else f"{'above' if self.low_open else 'at least'} {self.low:g}"
        high = None if self.high is None else f"{'below' if self.high_open else 'at most'} {self.high:g}"
        text = " and ".join(part for part in (low, high) if part) or "a finite number"
        return text + (", and a whole number from 1 on" if self.whole_above_one else "")

    def admits(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return True  # not a number: the type check reports it
        if not math.isfinite(value):
            return False
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return False
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            return False
        return not (self.whole_above_one and value > 1 and value != int(value))


_STEPS = dict(low=0, low_open=True, whole_above_one=True)

BOUNDS: dict[str, Bound] = {
    # grpo-core's own settings
    "compare": Bound("held-out prompts to compare on, 0 for none", "50", low=0),
    "num_processes": Bound("training processes", "2", low=1),
    "reward_workers": Bound("worker processes that score rewards", "4", low=1),
    "probe": Bound("held-out prompts the policy is probed on while training, 0 for none", "50", low=0),
    "probe_every": Bound("steps between held-out probes", "5", low=1),
    "tool_timeout": Bound("seconds a tool call may take", "30", low=0, low_open=True),
    "audit_every": Bound("steps between audits of the paid completions", "1", low=1),
    "num_machines": Bound("machines training together", "2", low=1),
    "machine_rank": Bound("this machine's rank among the machines", "0", low=0),
    "main_process_port": Bound("the port the machines meet on", "29500", low=1, high=65535),
    # GRPOConfig fields
    "max_steps": Bound("the number of training steps", "20", low=1),
    "num_generations": Bound("completions per prompt, compared within their group", "8", low=2),
    "learning_rate": Bound("the optimizer's step size (0 keeps the weights, as a stage that must not move them)", "1e-05", low=0),
    "per_device_train_batch_size": Bound("completions per device per step", "8", low=1),
    "gradient_accumulation_steps": Bound("batches per optimizer step", "1", low=1),
    "max_completion_length": Bound("tokens generated per completion", "256", low=1),
    "max_prompt_length": Bound("tokens kept of each prompt", "512", low=1),
    "save_steps": Bound("steps between checkpoints, or below 1 a fraction of the run", "10", **_STEPS),
    "logging_steps": Bound("steps between logged metrics, or below 1 a fraction of the run", "1", **_STEPS),
    "eval_steps": Bound("steps between evaluations, or below 1 a fraction of the run", "10", **_STEPS),
    "num_train_epochs": Bound("passes over the dataset", "1", low=0, low_open=True),
    "num_iterations": Bound("optimizer passes over each generation batch", "1", low=1),
    "steps_per_generation": Bound("steps that share one generation batch", "1", low=1),
    "generation_batch_size": Bound("completions generated at once", "16", low=1),
    "temperature": Bound("the sampling temperature", "1.0", low=0, low_open=True),
    "top_p": Bound("the nucleus sampling mass", "1.0", low=0, high=1, low_open=True),
    "top_k": Bound("tokens sampled from, 0 for all", "0", low=0),
    "min_p": Bound("the least probability of a sampled token, relative to the likeliest", "0.05", low=0, high=1),
    "repetition_penalty": Bound("the penalty on repeated tokens, 1 for none", "1.0", low=0, low_open=True),
    "beta": Bound("the weight of the KL penalty", "0.0", low=0),
    "epsilon": Bound("the clipping range", "0.2", low=0),
    "epsilon_high": Bound("the upper clipping range", "0.28", low=0),
    "warmup_steps": Bound("warm-up steps, or below 1 a fraction of the run", "0", low=0),
    "weight_decay": Bound("the weight decay", "0.0", low=0),
    "max_grad_norm": Bound("the gradient clipping norm", "1.0", low=0),
    "adam_beta1": Bound("Adam's first-moment decay", "0.9", low=0, high=1, high_open=True),
    "adam_beta2": Bound("Adam's second-moment decay", "0.999", low=0, high=1, high_open=True),
    "adam_epsilon": Bound("Adam's epsilon", "1e-08", low=0, low_open=True),
    "seed": Bound("the random seed", "0", low=0, high=2**32 - 1),
    "dataloader_num_workers": Bound("data-loading worker processes", "0", low=0),
    "vllm_gpu_memory_utilization": Bound("vLLM's share of GPU memory", "0.3", low=0, high=1, low_open=True),
}


def validate_bound(name: str, value) -> str | None:
    """None when ``value`` is within ``name``'s bound (or it has none); otherwise what is wrong and what to do."""
    bound = BOUNDS.get(name)
    if bound is None or bound.admits(value):
        return None
    return f"'{name}' ({bound.meaning}) must be {bound.rule()}, got {value!r}; use e.g. {name}={bound.example}"
