"""Loading datasets from local files and checking them against the selected rewards."""

from __future__ import annotations

from pathlib import Path

from grpo_core.errors import UsageError

_FORMATS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


def load_local(path, prompt_column="prompt", system_prompt=None, size=None, seed=0, shuffle=False):
    """A ``datasets.Dataset`` from a local file, with a ``prompt`` column."""
    if not path:
        raise UsageError("dataset 'local' needs a file: add --dataset-arg path=FILE.jsonl")
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"dataset file '{path}' does not exist; pass an existing .jsonl, .csv or .parquet file")
    builder = _FORMATS.get(file.suffix.lower())
    if builder is None:
        raise UsageError(f"dataset file '{path}' has an unknown extension; use one of: {', '.join(_FORMATS)}")
    from datasets import load_dataset

    try:
        dataset = load_dataset(builder, data_files=str(file), split="train")
    except Exception as error:
        raise UsageError(f"could not read dataset file '{path}': {error}") from None
    if prompt_column not in dataset.column_names:
        raise UsageError(
            f"dataset file '{path}' has no column '{prompt_column}'; its columns: {', '.join(dataset.column_names)}"
        )
    if prompt_column != "prompt":
        if "prompt" in dataset.column_names:
            dataset = dataset.remove_columns("prompt")
        dataset = dataset.rename_column(prompt_column, "prompt")
    if system_prompt:
        dataset = dataset.map(lambda row: {"prompt": with_system_prompt(row["prompt"], system_prompt)})
    if shuffle:
        dataset = dataset.shuffle(seed=seed)
    if size is not None:
        dataset = dataset.select(range(min(size, len(dataset))))
    if len(dataset) == 0:
        raise UsageError(f"dataset file '{path}' has no rows")
    return dataset


def with_system_prompt(prompt, system_prompt: str):
    """Turn a text prompt into chat messages with a system message, or prepend one to messages."""
    if isinstance(prompt, str):
        return [{"role": "system", "content": system_prompt}, {"role": "user", "content": prompt}]
    return [{"role": "system", "content": system_prompt}, *[m for m in prompt if m.get("role") != "system"]]


def check_columns(dataset, rewards, dataset_name: str) -> None:
    """Raise a UsageError when a selected reward reads a column the dataset lacks."""
    have = set(dataset.column_names)
    for reward in rewards:
        for column, source in reward.columns.items():
            if source not in have:
                raise UsageError(
                    f"reward '{reward.__name__}' needs the column '{source}', but dataset '{dataset_name}' has "
                    f"{', '.join(sorted(have))}; pick a dataset with that column or remap it with "
                    f"--reward-arg {reward.__name__}.{column}_column=COLUMN"
                )
