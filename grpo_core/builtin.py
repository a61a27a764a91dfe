"""grpo-core's own plugin: hardware profiles, the local-file dataset and model aliases."""

from __future__ import annotations

from grpo_core.hookspecs import hookimpl
from grpo_core.params import Param
from grpo_core.specs import DatasetSpec, HardwareProfile, ModelSpec


@hookimpl
def register_profiles(register):
    register(
        HardwareProfile(
            "cpu",
            "CPU only: float32, no LoRA, small groups",
            grpo_config={
                "use_cpu": True,
                "bf16": False,
                "fp16": False,
                "per_device_train_batch_size": 4,
                "num_generations": 4,
                "max_completion_length": 64,
                "gradient_accumulation_steps": 1,
                "logging_steps": 1,
                "report_to": "none",
                "dataloader_num_workers": 0,
            },
            model_kwargs={"dtype": "float32"},
        )
    )
    register(
        HardwareProfile(
            "auto",
            "Detect the hardware and pick a profile (says which and why)",
            pick=_pick_profile,
        )
    )


def _pick_profile() -> tuple[str, str]:
    import torch

    if torch.cuda.is_available():
        from grpo_core.plugins import get_registry

        if "gpu" in get_registry().items["profiles"]:
            name = torch.cuda.get_device_name(0)
            return "gpu", f"found {torch.cuda.device_count()} CUDA device(s), first is {name}"
        return "cpu", "a CUDA device is present but no 'gpu' profile is installed"
    return "cpu", "no CUDA device found"


@hookimpl
def register_datasets(register):
    register(
        DatasetSpec(
            "local",
            "A local jsonl, json, csv or parquet file with a 'prompt' column (text or chat messages)",
            load=_load_local,
            columns=("prompt",),
            params=(
                Param("path", None, str, "the file to read (required)"),
                Param("prompt_column", "prompt", str, "the column holding the prompt"),
                Param("system_prompt", None, str, "a system message put before each text prompt"),
                Param("size", None, int, "keep only the first N rows (after shuffling)"),
                Param("seed", 0, int, "shuffle seed"),
                Param("shuffle", False, bool, "shuffle the rows"),
            ),
        )
    )


def _load_local(path, prompt_column="prompt", system_prompt=None, size=None, seed=0, shuffle=False):
    from grpo_core.data import load_local

    return load_local(path, prompt_column, system_prompt, size, seed, shuffle)


@hookimpl
def register_models(register):
    from grpo_core import models

    register(
        ModelSpec(
            "tiny-random",
            "A tiny randomly initialised chat model built locally in seconds (for tests and dry runs)",
            resolve=models.tiny_random_path,
        )
    )
