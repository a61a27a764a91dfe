"""Resolving a run: every name looked up and every value checked that can be, before a dataset or model loads."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from grpo_core.errors import UsageError
from grpo_core.plugins import get_registry
from grpo_core.plugins.loading import (episode_rewards, load_dataset_offline_first, load_environments, load_rewards,
                                       validate_columns, validate_model_name)
from grpo_core.rewards.backend import configure_scoring, validate_scoring
from grpo_core.rundir.folder import validate_is_folder
from grpo_core.settings.declared import DEFAULT_TOOL_TURNS, RunSettings, parse_grpo_fields
from grpo_core.settings.grpo_fields import validate_grpo_config
from grpo_core.settings.layers import layer
from grpo_core.training import control, health, launch
from grpo_core.training.schedules import build_schedules, constant_weights
from grpo_core.training.tools import validate_environment_column

DEFAULT_OUTPUT_DIR = "runs/grpo"


@dataclass
class ResolvedRun:
    """A run with every name resolved; the dataset is loaded by :func:`load_data`, the model by the trainer."""

    settings: RunSettings
    rewards: list
    dataset: object
    dataset_params: dict
    model: str  # the name given: an alias, folder or hub id (resolved when the model is loaded)
    profile: object
    profile_reason: str
    grpo: dict  # final GRPOConfig keyword arguments
    dataset_spec: object = None
    schedules: dict = field(default_factory=dict)  # reward name -> schedules.Schedule of its weight
    lora_adapter: str | None = None  # a LoRA adapter folder to continue training (a stage after the first)
    place: launch.Place = field(default_factory=launch.Place)  # the machines it trains on
    environments: list = field(default_factory=list)  # plugins.loading.Environment, each with its parameters
    chat_template: str | None = None  # the tool template the model gets (None: its own), once tools.pick_template ran
    chat_template_source: str | None = None  # where that template comes from, said by --dry-run


def resolve(settings: RunSettings, log=print, load_dataset: bool = True, num_processes: int | None = None) -> ResolvedRun:
    """Check and resolve everything that can be checked before a model is loaded, cheapest first.

    With ``load_dataset=False`` (``--dry-run``) no dataset is read and nothing touches the network.
    """
    registry = get_registry()
    environments = load_environments(settings.environments, settings.env_args)
    if not settings.rewards and not any(e.has_reward for e in environments):
        raise UsageError("no reward selected; add --reward NAME (installed: "
                         f"{', '.join(sorted(registry.items['rewards'])) or 'none'})")
    control.validate_control(settings)
    health.validate_health(settings)
    weights = {**settings.weights, **constant_weights(settings.reward_schedules, settings.rewards)}
    rewards = load_rewards(settings.rewards, params=settings.reward_args, weights=weights, dataset=settings.dataset)
    rewards += episode_rewards(environments, weights)
    schedules = build_schedules(settings.reward_schedules, rewards)
    validate_scoring(settings.reward_workers, settings.reward_backend, settings.ray_address)
    registry.profile(settings.profile)  # the name only; a profile that picks looks at the hardware below
    if settings.dataset is None:
        raise UsageError("no dataset selected; add --dataset NAME (installed: "
                         f"{', '.join(sorted(registry.items['datasets']))})")
    dataset_spec = registry.dataset(settings.dataset)
    dataset_params = dataset_spec.resolve(settings.dataset_args)
    if settings.model is None:
        raise UsageError("no model selected; add --model NAME_OR_PATH")
    validate_model_name(settings.model)
    grpo_settings = parse_grpo_fields(settings.grpo, "GRPOConfig")
    validate_is_folder(grpo_settings.get("output_dir") or DEFAULT_OUTPUT_DIR)
    place = launch.place_of(settings, num_processes)
    profile, reason = pick_profile(settings.profile)
    grpo = layer(*({"grpo": values} for values in (settings.base_grpo, profile.grpo_config, grpo_settings)))["grpo"]
    grpo["output_dir"] = str(Path(grpo.get("output_dir") or DEFAULT_OUTPUT_DIR).absolute())
    grpo["reward_weights"] = [float(r.weight) for r in rewards]
    if profile.model_kwargs:  # a profile written before model_init_kwargs: the same arguments, under TRL's name
        grpo["model_init_kwargs"] = {**profile.model_kwargs, **(grpo.get("model_init_kwargs") or {})}
    if environments:
        grpo.setdefault("max_tool_calling_iterations", DEFAULT_TOOL_TURNS)
    if not grpo.get("use_cpu") and not _has_accelerator():
        grpo.update(use_cpu=True, bf16=False, fp16=False)  # TRL defaults to bf16, which fails on a CPU
    validate_grpo_config(grpo, process_count(profile, num_processes, place))
    run = ResolvedRun(settings, rewards, None, dataset_params, settings.model, profile, reason, grpo, dataset_spec,
                      schedules, place=place, environments=environments)
    if load_dataset:
        load_data(run)
    return run


def start_scoring(run: ResolvedRun) -> None:
    """The run's worker pool or Ray cluster, set up before the dataset and model load (an unreachable cluster is
    a usage error said here)."""
    settings = run.settings
    configure_scoring(settings.reward_workers, settings.reward_backend, settings.ray_address)


def profile_line(run: ResolvedRun) -> str:
    """The hardware profile the run uses and why, shown once every input check has passed."""
    return f"profile: {run.profile.name} ({run.profile_reason})"


def load_data(run: ResolvedRun) -> None:
    """Read the run's dataset (offline first) and check it has what each reward reads."""
    run.dataset = load_dataset_offline_first(run.dataset_spec, run.dataset_params, run.settings.dataset)
    validate_columns(run.dataset, run.rewards, run.settings.dataset)
    validate_environment_column(run.dataset, run.environments, run.settings.dataset)


def process_count(profile, num_processes: int | None, place: launch.Place = launch.Place()) -> int:
    """How many training processes the run will have on all its machines (TRL's batch rules count them)."""
    if launch.is_launched():
        return int(os.environ.get("WORLD_SIZE") or 1)
    return launch.process_total(profile, num_processes, place)


def pick_profile(name: str):
    registry = get_registry()
    profile = registry.profile(name)
    reason = "selected"
    if profile.pick is not None:
        picked, reason = profile.pick()
        profile = registry.profile(picked)
    return profile, reason


def _has_accelerator() -> bool:
    import torch

    return torch.cuda.is_available() or (hasattr(torch.backends, "mps") and torch.backends.mps.is_available())
