"""grpo-core: installable, property-checked reward plugins for GRPO training with TRL.

The public API is what this module exports (``__all__``) and ``grpo_core.testing``, the author
kit. Plugins, examples and scripts import only these two; every other module is internal.
"""

from grpo_core.errors import GrpoError, PluginError, RewardError, UsageError
from grpo_core.plugins.hookspecs import hookimpl
from grpo_core.plugins.loading import load_dataset, load_rewards, resolve_model
from grpo_core.answers.numbers import Number, NumberMatch, find_numbers, same_number
from grpo_core.answers.numbers import parse_plain_number as parse_number
from grpo_core.settings.params import Param
from grpo_core.rewards.reward import ConcurrentReward, Reward, completion_text
from grpo_core.rewards.declared import Direction, Measure, RewardChecks
from grpo_core.rewards.unscored import Unscored
from grpo_core.specs import DatasetSpec, EnvironmentSpec, ModelSpec, ProfileSpec, RewardSpec, dataset_param
from grpo_core.answers.tags import answer_tag
from grpo_core.rewards.backend import configure_scoring
from grpo_core.rewards.timeout import run_with_timeouts, warm_workers

__all__ = [
    "ConcurrentReward",
    "DatasetSpec",
    "Direction",
    "EnvironmentSpec",
    "GrpoError",
    "Measure",
    "ModelSpec",
    "Number",
    "NumberMatch",
    "Param",
    "PluginError",
    "ProfileSpec",
    "Reward",
    "RewardError",
    "RewardChecks",
    "RewardSpec",
    "Unscored",
    "UsageError",
    "answer_tag",
    "completion_text",
    "configure_scoring",
    "dataset_param",
    "find_numbers",
    "hookimpl",
    "load_dataset",
    "load_rewards",
    "parse_number",
    "resolve_model",
    "run_with_timeouts",
    "same_number",
    "warm_workers",
]
