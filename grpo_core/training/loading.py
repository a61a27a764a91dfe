"""Datasets and models by name, for scripts that use TRL directly: what grpo-run does before training."""

from __future__ import annotations


def load_dataset(name: str, args: dict | None = None, rewards: list | None = None):
    """The installed dataset ``name`` as a ``datasets.Dataset``, prepared as grpo-run prepares it.

    ``args`` are the dataset's parameters (``{"size": 200}``; text values are parsed as on the command
    line, unknown names are an error). Local data never touches the network, and a dataset that needs
    the hub gets one quick reachability check. With ``rewards`` (from ``load_rewards``) the dataset must
    have every column they read, with a value in each row, or a UsageError says which.
    """
    from grpo_core.builtin.datasets import check_columns
    from grpo_core.plugins import get_registry
    from grpo_core.training.trainer import load_dataset_offline_first

    spec = get_registry().dataset(name)
    dataset = load_dataset_offline_first(spec, spec.resolve(args), name)
    if rewards:
        check_columns(dataset, rewards, name)
    return dataset


def resolve_model(name: str) -> str:
    """What ``from_pretrained`` takes for a ``--model`` value: an installed alias's folder, else ``name`` itself.

    ``resolve_model("tiny-random")`` builds (once) and returns the tiny test model's folder;
    ``"smollm2-135m"`` converts the embedded model once; a local folder or hub id comes back unchanged.
    A name that is none of these is a UsageError listing the installed aliases.
    """
    from grpo_core.training.trainer import check_model_name
    from grpo_core.training.trainer import resolve_model as model_location

    check_model_name(name)
    return model_location(name)
