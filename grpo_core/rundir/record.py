"""What a run records about itself: run_config.yaml (absolute paths, so it reproduces the run from
any folder) and the --dry-run description; nothing here loads a model or a dataset."""

from __future__ import annotations

import json
import os
from pathlib import Path
from grpo_core.errors import UsageError
from grpo_core.plugins import get_registry
from grpo_core.plugins.loading import is_episode_reward
from grpo_core.rundir.folder import checkpoints, write_atomic
from grpo_core.rundir.names import FINAL_DIR, RUN_CONFIG
from grpo_core.settings.declared import describe_settings
from grpo_core.settings.layers import file_layer, read_config_file


def run_config(run) -> dict:
    """Everything a resolved run (``training.ResolvedRun``) holds, as a config file with absolute paths: ``grpo-run --config`` reproduces it from any folder."""
    settings = run.settings
    rewards = [r for r in run.rewards if not is_episode_reward(r)]  # an environment's own comes with --env
    return {
        "rewards": [f"{getattr(r.spec, 'source', r.__name__)}={r.weight:g}" for r in rewards],
        "reward_args": {r.__name__: {k: _absolute(v) for k, v in r.params.items()} for r in rewards if r.params},
        **({"reward_schedules": {n: s.describe() for n, s in run.schedules.items()}} if run.schedules else {}),
        **({"environments": [getattr(e.spec, "source", e.selected) for e in run.environments]}
           if run.environments else {}),
        **({"env_args": {e.name: {k: _absolute(v) for k, v in e.params.items()} for e in run.environments
                         if e.params}} if any(e.params for e in run.environments) else {}),
        **({"chat_template": _absolute(settings.chat_template, True)} if settings.chat_template else {}),
        "dataset": getattr(run.dataset_spec, "source", settings.dataset),
        "dataset_args": {k: _absolute(v, k in PATH_ARGS) for k, v in run.dataset_params.items() if v is not None},
        "model": _absolute(settings.model, os.path.isdir(settings.model)),
        "profile": run.profile.name,
        **({"compare": settings.compare} if settings.compare else {}),
        **({"control": settings.control} if settings.control else {}),
        **({"control_of": settings.control_of} if settings.control_of else {}),
        **({"merge_lora": True} if settings.merge_lora else {}),
        **({"keep_checkpoints": False} if not settings.keep_checkpoints else {}),
        **({"reward_workers": settings.reward_workers} if settings.reward_workers else {}),
        **({"reward_backend": settings.reward_backend} if settings.reward_backend != "local" else {}),
        **({"ray_address": settings.ray_address} if settings.ray_address else {}),
        **{k: v for k, v in run.grpo.items() if k != "reward_weights"},
    }


PATH_ARGS = ("path", "files")  # dataset parameters that name files


def _absolute(value, is_path: bool = False):
    """A relative path as an absolute one; other values as they are."""
    if isinstance(value, str) and value and (is_path or (os.sep in value or "." in value) and os.path.isfile(value)):
        return os.path.abspath(value)
    return value


def write_run_config(run, path: Path) -> None:
    """``run_config.yaml``, written atomically."""
    import yaml

    write_atomic(path, yaml.safe_dump(run_config(run), sort_keys=False))


# What ``grpo-run sample`` takes from a run's folder: what it scored, on which data, with which tools.
SAMPLED_KEYS = ("dataset", "dataset_args", "rewards", "weights", "reward_args", "environments", "env_args",
                "chat_template")


def is_run_folder(path: str) -> bool:
    """A run's output folder (it holds ``run_config.yaml``), as opposed to a model folder."""
    return os.path.isfile(os.path.join(path, RUN_CONFIG))


def run_folder_model(folder: str) -> str:
    """The trained model in a run's folder (``final/``); a UsageError naming a checkpoint to pass when the run did not
    finish."""
    final = os.path.join(folder, FINAL_DIR)
    if os.path.isdir(final):
        return final
    found = checkpoints(Path(folder))
    instead = (f"pass one of its checkpoints, e.g. --model {found[-1]}" if found else
               "it has no checkpoint either; train it first")
    raise UsageError(f"run folder '{folder}' has no {FINAL_DIR}/ model (the run did not finish); {instead}")


def run_folder_layer(folder: str) -> dict:
    """What a run's ``run_config.yaml`` says it scored and on which data, as a settings layer (``SAMPLED_KEYS``), and
    its ``grpo`` fields."""
    path = os.path.join(folder, RUN_CONFIG)
    whole = file_layer(read_config_file(path), path)
    return {**{key: whole[key] for key in SAMPLED_KEYS if key in whole}, "grpo": whole.get("grpo", {})}


def base_model_words(model: str) -> str:
    """How a run's model card names the model ``model`` (a --model value) that TRL leaves unnamed: TRL names a base
    model from its config, ``None`` for a local folder."""
    alias = get_registry().model(model)
    return f"`{model}`" + (f" (a grpo-run model alias: {alias.description})" if alias is not None else "")


def describe(run, launch_command: list[str] | None = None) -> str:
    """The resolved run as JSON (for --dry-run): nothing is loaded to produce it."""
    return json.dumps(
        {
            "model": _describe_model(run.model),
            "dataset": {"name": run.settings.dataset, **run.dataset_params},
            "rewards": [
                {"name": r.__name__, "weight": r.weight, "params": r.params, "columns": r.columns,
                 **({"signature": r.spec.read_as} if getattr(r.spec, "read_as", "") else {}),
                 **({"schedule": run.schedules[r.__name__].describe()} if r.__name__ in run.schedules else {})}
                for r in run.rewards
            ],
            **({"environments": [{"name": e.name, "params": e.params, "tools": e.spec.tool_names()}
                                 for e in run.environments],
                "chat_template": run.chat_template_source or "chosen from the model's tokenizer before the model loads"}
               if run.environments else {}),
            "profile": {"name": run.profile.name, "reason": run.profile_reason},
            "settings": describe_settings(run.settings),
            "grpo_config": run.grpo,
            "lora": run.profile.lora,
            "launch": launch_command,
        },
        indent=2,
        default=str,
    )


def _describe_model(name: str) -> dict:
    alias = get_registry().model(name)
    if alias is None:
        return {"name": name}
    return {"name": name, "alias": True, "offline": bool(alias.available())}
