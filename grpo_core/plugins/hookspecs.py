"""The hooks a grpo plugin can implement. Each receives a callback and calls it."""

import pluggy

hookspec = pluggy.HookspecMarker("grpo")
hookimpl = pluggy.HookimplMarker("grpo")


@hookspec
def register_rewards(register):
    """Register rewards: call ``register(RewardSpec(...))`` once per reward."""


@hookspec
def register_datasets(register):
    """Register datasets: call ``register(DatasetSpec(...))`` once per dataset."""


@hookspec
def register_environments(register):
    """Register environments: call ``register(EnvironmentSpec(...))`` once per environment."""


@hookspec
def register_profiles(register):
    """Register hardware profiles: call ``register(ProfileSpec(...))`` once per profile."""


@hookspec
def register_models(register):
    """Register model aliases: call ``register(ModelSpec(...))`` once per alias."""


@hookspec
def register_commands(cli):
    """Add click commands to the ``grpo-run`` group ``cli``."""
