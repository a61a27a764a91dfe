"""Errors users see: each is one sentence naming the bad value and what to do."""


class GrpoError(Exception):
    """Base class for grpo-core errors."""


class UsageError(GrpoError):
    """Bad input from the user (a name, value, file or column); the CLI exits with code 2."""


class PluginError(GrpoError):
    """A plugin failed to load or two plugins clash."""


class RewardError(GrpoError):
    """A reward failed on a whole batch: training stops with the plugin, parameters and input."""
