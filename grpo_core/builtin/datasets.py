"""Datasets from local files and the hub: read, map columns to a chat ``prompt`` and ``answer``, check.

``local`` and ``hub`` differ only in how the rows are read; both hand them to :func:`prepare`,
which applies the column mapping, system prompt, few-shot examples, shuffling and size.
"""

from __future__ import annotations

from pathlib import Path

from grpo_core.errors import UsageError
from grpo_core.settings.params import Param, did_you_mean
from grpo_core.specs import dataset_param

_FORMATS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}

# Every few-shot example is copied into every prompt: beyond this, prompts outgrow any context window.
MAX_FEW_SHOT = 32

# Parameters shared by every dataset that maps columns (``local``, ``hub``, and plugins that want them).
MAPPING_PARAMS = (
    dataset_param("split", help="the split to read; slices work too, e.g. train[:500]"),
    Param("question", None, str, "column holding the question text, turned into chat messages (default: the 'prompt' column as it is)"),
    Param("answer", None, str, "column exposed as 'answer', the gold answer rewards such as math read"),
    Param("columns", None, str, "more columns to expose under another name, as NEW=OLD,NEW2=OLD2"),
    dataset_param("system_prompt"),
    Param("few_shot", 0, int, "put N solved examples, taken out of the data, before every question", minimum=0,
          maximum=MAX_FEW_SHOT),
    Param("few_shot_answer", None, str, "column holding the worked solution shown in few-shot examples (default: the answer column)"),
    dataset_param("size", minimum=1),
    dataset_param("shuffle"),
    dataset_param("seed"),
)


def load_local(path=None, files=None, **mapping):
    """A ``datasets.Dataset`` read from a local jsonl, json, csv or parquet file, then :func:`prepare`-d.

    ``path`` is one file, its name taken literally (``data[1].jsonl`` is that file); ``files`` is a
    glob pattern (``data/*.jsonl``) whose matching files are read together.
    """
    import glob

    if path and files:
        raise UsageError("dataset 'local' takes path=FILE or files=PATTERN, not both")
    if files:
        matches = sorted(glob.glob(files))
        if not matches:
            raise UsageError(f"dataset pattern files='{files}' matches no file; check the folder and the pattern")
        suffixes = {Path(m).suffix.lower() for m in matches}
        if len(suffixes) > 1:
            raise UsageError(f"dataset pattern files='{files}' matches files of several formats "
                             f"({', '.join(sorted(suffixes))}); make the pattern match one format")
        file, data_files, label = Path(matches[0]), [glob.escape(m) for m in matches], f"files '{files}'"
    elif path:
        file = Path(path)
        if file.is_dir():
            raise UsageError(f"dataset file '{path}' is a folder; pass one file in it with path={file / 'FILE.jsonl'}, "
                             f"or all its files of one format with files='{file / '*.jsonl'}'")
        if not file.is_file():
            raise UsageError(f"dataset file '{path}' does not exist; pass an existing .jsonl, .csv or .parquet file "
                             "(for several files, use files=PATTERN)")
        data_files, label = glob.escape(str(file)), f"file '{path}'"  # a literal name, never a pattern
    else:
        raise UsageError("dataset 'local' needs a file: add --dataset-arg path=FILE.jsonl")
    builder = _FORMATS.get(file.suffix.lower())
    if builder is None:
        raise UsageError(f"dataset file '{file}' has an unknown extension; use one of: {', '.join(_FORMATS)}")
    from datasets import load_dataset

    split = mapping.pop("split", None) or "train"
    try:
        dataset = load_dataset(builder, data_files=data_files, split=split)
    except Exception as error:
        columns = _columns_if_empty(file, builder) if path else None
        if columns is not None:
            raise UsageError(
                f"dataset file '{path}' has no rows; its columns: {', '.join(columns) or '(none)'}"
            ) from None
        raise UsageError(f"could not read dataset {label} (split '{split}'): {_first_line(error)}") from None
    return prepare(dataset, label, **mapping)


def _columns_if_empty(file: Path, builder: str) -> list[str] | None:
    """The column names of a file that holds no rows, or None if it has rows (datasets fails on empty files)."""
    if builder == "parquet":
        import pyarrow.parquet as pq

        try:
            metadata = pq.ParquetFile(file).metadata
        except Exception:
            return None
        return list(metadata.schema.names) if metadata.num_rows == 0 else None
    lines = [line for line in file.read_text(errors="replace").splitlines() if line.strip()]
    if builder == "csv":
        if len(lines) > 1:
            return None
        return [name.strip() for name in lines[0].split(",")] if lines else []
    return [] if not lines or "".join(lines).strip() == "[]" else None


def load_hub(name=None, config=None, revision=None, **mapping):
    """A dataset from the Hugging Face hub (or a local dataset folder) via ``datasets.load_dataset``, then :func:`prepare`-d."""
    if not name:
        raise UsageError(
            "dataset 'hub' needs a dataset id: add --dataset-arg name=ORG/NAME (and config=..., split=... if it has them)"
        )
    import os

    from datasets import load_dataset

    split = mapping.pop("split", None) or "train"
    where = f"'{name}'" + (f" (config '{config}')" if config else "")
    try:
        dataset = load_dataset(name, config, split=split, revision=revision)
    except Exception as error:
        offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}
        hint = "; HF_HUB_OFFLINE is set, so only datasets already in the local cache can be read" if offline else ""
        raise UsageError(
            f"could not load dataset {where}, split '{split}': {_first_line(error)}{hint}; check the name, config and split"
        ) from None
    return prepare(dataset, where, **mapping)


def prepare(
    dataset,
    label: str,
    question=None,
    answer=None,
    columns=None,
    system_prompt=None,
    few_shot=0,
    few_shot_answer=None,
    size=None,
    shuffle=False,
    seed=0,
):
    """Map raw rows to what GRPO needs: a ``prompt`` (text or chat messages) plus renamed columns.

    ``question`` names the column holding the question text, which becomes a user message (with
    ``system_prompt`` and ``few_shot`` examples in front); without it the ``prompt`` column is used
    as it is. ``answer`` is exposed as ``answer``, and ``columns`` (``NEW=OLD,...``) exposes the others.
    Every named column is checked before any row is touched; ``label`` names the dataset in errors.
    """
    have = list(dataset.column_names)
    if (few_shot or 0) < 0 or (size is not None and size < 0):
        raise UsageError(f"few_shot and size must be 0 or more; got few_shot={few_shot}, size={size}")
    renames = parse_columns(columns)
    wanted = [(f"columns {new}={source}", source) for new, source in renames.items()]
    if answer:
        renames = {"answer": answer, **renames}
        wanted.insert(0, (f"answer={answer}", answer))
    if question:
        wanted.insert(0, (f"question={question}", question))
    if few_shot:
        solution = few_shot_answer or answer
        if solution is None:
            raise UsageError(
                f"few_shot={few_shot} needs the column with the worked solutions: add --dataset-arg answer=COLUMN "
                f"or few_shot_answer=COLUMN; dataset {label} has columns: {', '.join(have)}"
            )
        wanted.append((f"{'few_shot_answer' if few_shot_answer else 'answer'}={solution}", solution))
    for param, column in wanted:
        if column not in have:
            raise UsageError(
                f"dataset {label} has no column '{column}' (named by {param}){did_you_mean(column, have)}; "
                f"its columns: {', '.join(have)}"
            )
    if not question and "prompt" not in have:
        raise UsageError(
            f"dataset {label} has no 'prompt' column; name the column holding the question with "
            f"--dataset-arg question=COLUMN; its columns: {', '.join(have)}"
        )
    if len(dataset) == 0:
        raise UsageError(f"dataset {label} has no rows; its columns: {', '.join(have)}")
    if shuffle:
        dataset = dataset.shuffle(seed=seed)
    source = question or "prompt"
    examples = []
    if few_shot:
        if few_shot >= len(dataset):
            raise UsageError(
                f"few_shot={few_shot} leaves no rows to train on: dataset {label} has {len(dataset)}; use fewer examples"
            )
        examples = [(_text(row[source]), _text(row[solution])) for row in dataset.select(range(few_shot))]
        dataset = dataset.select(range(few_shot, len(dataset)))
    if size is not None:
        dataset = dataset.select(range(min(size, len(dataset))))
    if len(dataset) == 0:
        raise UsageError(f"dataset {label} has no rows left with size={size}; use a size of 1 or more")
    as_chat = bool(question or system_prompt or examples)

    def convert(row):
        prompt = row[source]
        if as_chat:
            prompt = chat_prompt(prompt, system_prompt, examples)
        return {"prompt": prompt, **{new: row[old] for new, old in renames.items()}}

    return dataset.map(convert, desc="mapping columns")


def parse_columns(text) -> dict[str, str]:
    """``NEW=OLD,NEW2=OLD2`` -> ``{"NEW": "OLD", ...}``; anything else is a UsageError."""
    renames: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        new, sep, old = (piece.strip() for piece in part.partition("="))
        if not sep or not new or not old:
            raise UsageError(
                f"dataset parameter columns={text!r} must look like NEW=OLD,NEW2=OLD2 (e.g. columns=schema=json_schema)"
            )
        if new == "prompt":
            raise UsageError("columns cannot rename to 'prompt'; name the question column with question=COLUMN instead")
        renames[new] = old
    return renames


def chat_prompt(prompt, system_prompt=None, examples=()) -> list[dict]:
    """Chat messages: the system prompt, few-shot ``(question, solution)`` pairs, then the question.

    ``prompt`` is question text or messages; a ``system_prompt`` replaces the messages' own.
    """
    if isinstance(prompt, list) and prompt and all(isinstance(m, dict) and "role" in m for m in prompt):
        messages = [dict(m) for m in prompt]
    else:  # text, or a number or None read from a csv cell
        messages = [{"role": "user", "content": prompt if isinstance(prompt, str) else _text(prompt)}]
    leading = 0
    while leading < len(messages) and messages[leading].get("role") == "system":
        leading += 1
    system = [{"role": "system", "content": system_prompt}] if system_prompt else messages[:leading]
    shots = [
        message
        for question, solution in examples
        for message in ({"role": "user", "content": question}, {"role": "assistant", "content": solution})
    ]
    return system + shots + messages[leading:]


def _text(value) -> str:
    if isinstance(value, list):
        return "\n".join(str(m.get("content", "")) if isinstance(m, dict) else str(m) for m in value)
    return "" if value is None else str(value)


def _first_line(error: Exception) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]
