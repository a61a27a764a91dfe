"""grpo-core: installable, property-checked reward plugins for GRPO training with TRL."""

from grpo_core.errors import GrpoError, PluginError, RewardError, UsageError
from grpo_core.hookspecs import hookimpl
from grpo_core.numbers import Number, parse_plain_number as parse_number, same_number
from grpo_core.params import Param
from grpo_core.rewards import Direction, Reward, RewardSpec, Unscored, completion_text, load_rewards
from grpo_core.reward_checks import RewardChecks
from grpo_core.specs import DatasetSpec, HardwareProfile, ModelSpec

__all__ = [
    "DatasetSpec",
    "Direction",
    "GrpoError",
    "HardwareProfile",
    "ModelSpec",
    "Number",
    "Param",
    "PluginError",
    "Reward",
    "RewardError",
    "RewardChecks",
    "RewardSpec",
    "Unscored",
    "UsageError",
    "completion_text",
    "hookimpl",
    "load_rewards",
    "parse_number",
    "same_number",
]
