"""The reward model and its tokenizer, loaded once per process and shared by every bound reward, stage and check.

A model is checked before it loads, from its config alone: one output (a scalar reward), and a sequence
classifier rather than a language model; each problem is a ValueError naming the model and what to pass instead,
which grpo-core reports as one line with exit status 2.
"""

from __future__ import annotations

import os
import re
import threading

from grpo_core import UsageError, resolve_model

DTYPES = ("float32", "bfloat16", "float16")
HUB_ID = re.compile(r"\w[\w.-]*/\w[\w.-]*")  # org/name, as the hub spells ids
_LOADED: dict[tuple, tuple] = {}
_LOCATIONS: dict[str, str] = {}  # a model name already checked and loaded -> its location
_LOCK = threading.Lock()


def model_location(name: str) -> str:
    """The folder or hub id ``name`` stands for, resolved as ``grpo-run --model`` resolves it (aliases, folders,
    hub ids); a ValueError when it names none of them."""
    if not name:
        raise ValueError("no reward model given; pass a sequence-classification model folder or hub id with "
                         "--reward-arg reward-model.model=FOLDER (python -m grpo_reward_model.train FOLDER trains a "
                         "small one)")
    try:
        return resolve_model(name)
    except UsageError as error:
        raise ValueError(f"model: {error}") from None


def read_config(location: str):
    """The model's config, from the folder or the local hub cache (offline); a ValueError when it cannot be read."""
    from transformers import AutoConfig

    if os.path.isdir(location):
        if not os.path.isfile(os.path.join(location, "config.json")):
            raise ValueError(f"model folder '{location}' has no config.json; pass a folder written by save_pretrained")
    elif not HUB_ID.fullmatch(location):
        raise ValueError(f"model folder '{location}' does not exist; pass a reward model's folder or a hub id "
                         f"(org/name)")
    try:
        return AutoConfig.from_pretrained(location)
    except (OSError, ValueError) as error:
        if os.path.isdir(location):
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise ValueError(f"model folder '{location}' cannot be read ({first}); pass a folder written by "
                             f"save_pretrained") from None
        raise ValueError(f"model '{location}' is not a local folder nor in the local Hugging Face cache; download "
                         f"it once with network access, or pass a local folder") from None


def check_reward_config(config, location: str) -> None:
    """A ValueError unless ``config`` describes a sequence classifier with exactly one output."""
    architectures = list(getattr(config, "architectures", None) or [])
    if architectures and not any(a.endswith("ForSequenceClassification") for a in architectures):
        raise ValueError(f"model '{location}' is a {architectures[0]}, not a reward model (a sequence classifier with "
                         f"one output); train one with trl's RewardTrainer, or pass such a folder")
    if config.num_labels != 1:
        raise ValueError(f"model '{location}' has {config.num_labels} labels; a reward model has exactly one output "
                         f"(num_labels=1), the reward, as trl's RewardTrainer trains it")


def validate_model(name: str) -> str:
    """The resolved location of reward model ``name``, once its config says it is one (cheap: no weights load)."""
    location = model_location(name)
    check_reward_config(read_config(location), location)
    return location


def pick_device(device: str) -> str:
    """``auto``: the device of the run this process trains (accelerate's state, set from the profile), else cpu."""
    if device != "auto":
        return device
    try:
        from accelerate.state import PartialState

        if PartialState._shared_state:  # a trainer set it up; never created here, which would fix it for the run
            return str(PartialState().device)
    except ImportError:
        pass
    return "cpu"


def loaded(name: str, dtype: str, device: str):
    """(model, tokenizer) for reward model ``name``, loaded on first use and kept for the process."""
    with _LOCK:
        location = _LOCATIONS.get(name)
    if location is None:
        location = validate_model(name)
        location = os.path.abspath(location) if os.path.isdir(location) else location
    key = (location, dtype, pick_device(device))
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = _load(location, dtype, key[2])
        _LOCATIONS[name] = location
        return _LOADED[key]


def _load(location: str, dtype: str, device: str):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(location)
    model = AutoModelForSequenceClassification.from_pretrained(location, dtype=getattr(torch, dtype))
    if tokenizer.pad_token is None:  # a batch needs a pad token; the end-of-sequence token is the usual stand-in
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    if model.config.pad_token_id is None:  # the head finds each row's last token by the pad token
        model.config.pad_token_id = tokenizer.pad_token_id
    tokenizer.padding_side = "right"  # real tokens keep positions 0..n-1, alone or in a batch
    tokenizer.truncation_side = "left"  # past max_length the completion's end is kept, where the head reads
    return model.to(device).eval(), tokenizer


def forget() -> None:
    """Drop every loaded model (tests that build a new model in the same folder)."""
    with _LOCK:
        _LOADED.clear()
        _LOCATIONS.clear()
