"""Datasets and models by name, for scripts that use TRL directly: what grpo-run does before training."""

from __future__ import annotations

from grpo_core.builtin.datasets import validate_columns
from grpo_core.plugins import get_registry
from grpo_core.settings.params import params_or_former_args


def load_dataset(name: str, params: dict | None = None, rewards: list | None = None, *, args: dict | None = None):
    """The installed dataset ``name`` as a ``datasets.Dataset``, prepared as grpo-run prepares it.

    ``params`` are the dataset's parameters (``{"size": 200}``; text values are parsed as on the command
    line, unknown names are an error; ``args=`` is their former, deprecated name). Local data never touches the network, and a dataset that needs
    the hub gets one quick reachability check. With ``rewards`` (from ``load_rewards``) the dataset must
    have every column they read, with a value in each row, or a UsageError says which.
    """
    params = params_or_former_args(params, args, "load_dataset")
    from grpo_core.training.trainer import load_dataset_offline_first

    spec = get_registry().dataset(name)
    dataset = load_dataset_offline_first(spec, spec.resolve(params), name)
    if rewards:
        validate_columns(dataset, rewards, name)
    return dataset


def resolve_model(name: str) -> str:
    """What ``from_pretrained`` takes for a ``--model`` value: an installed alias's folder, else ``name`` itself.

    ``resolve_model("tiny-random")`` builds (once) and returns the tiny test model's folder;
    ``"smollm2-135m"`` converts the embedded model once; a local folder or hub id comes back unchanged.
    A name that is none of these is a UsageError listing the installed aliases.
    """
    from grpo_core.training.trainer import validate_model_name, model_path

    validate_model_name(name)
    return model_path(name)
