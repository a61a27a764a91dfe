"""What dataset, model and hardware-profile plugins register."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from grpo_core.settings.params import Param, resolve_params


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset by name.

    ``load(**params)`` returns a ``datasets.Dataset`` with a ``prompt`` column (a string or
    chat messages) plus the columns in ``columns``. Import ``datasets`` inside ``load``.
    ``reward_params`` maps a reward name to parameter values this dataset asks of it, e.g.
    ``{"math": {"allow_expressions": False}}`` for a dataset that teaches evaluation: they apply when
    that reward is in the run, under the user's own ``--reward-arg``/``reward_args`` (the user wins),
    and a name the reward does not have is a PluginError naming the dataset.
    """

    name: str
    description: str
    load: Callable[..., Any]
    columns: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    # (dataset, params) -> [transformers.TrainerCallback, ...] added to the trainer (a curriculum that
    # logs its level and stores it in checkpoints); called only when training.
    callbacks: Callable[[Any, dict], list] | None = None
    reward_params: dict[str, dict] = field(default_factory=dict, hash=False)
    distribution: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.reward_params, dict) or not all(
            isinstance(k, str) and isinstance(v, dict) for k, v in self.reward_params.items()
        ):
            raise TypeError(f"dataset '{self.name}': reward_params must map reward names to parameter dicts, "
                            f"e.g. {{'math': {{'allow_expressions': False}}}}; got {self.reward_params!r}")

    def resolve(self, args: dict | None = None) -> dict:
        return resolve_params(self.params, args, f"dataset '{self.name}'")


@dataclass(frozen=True)
class ModelSpec:
    """A model alias: ``resolve()`` returns a local path or hub id for ``from_pretrained``.

    ``available()`` says, without loading anything, whether it resolves offline right now.
    """

    name: str
    description: str
    resolve: Callable[[], str]
    available: Callable[[], bool] = lambda: True
    distribution: str = field(default="", compare=False)


@dataclass(frozen=True)
class HardwareProfile:
    """Hardware as data: GRPOConfig fields, model-loading arguments, a LoRA config and a launcher.

    ``grpo_config`` holds GRPOConfig field values; ``model_kwargs`` go to ``from_pretrained``
    (``dtype`` as a string such as "bfloat16"); ``lora`` holds ``peft.LoraConfig`` fields or
    None; ``launcher`` holds ``accelerate launch`` options or None for a single process.
    ``pick()``, for profiles such as ``auto``, returns ``(profile name, reason)`` to use instead.
    """

    name: str
    description: str
    grpo_config: dict = field(default_factory=dict)
    model_kwargs: dict = field(default_factory=dict)
    lora: dict | None = None
    launcher: dict | None = None
    pick: Callable[[], tuple[str, str]] | None = None
    distribution: str = field(default="", compare=False)
