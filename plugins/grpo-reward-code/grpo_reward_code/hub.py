"""The ``code-hub`` dataset: MBPP- and HumanEval-style columns, from the hub or a local file, made into
``prompt`` and ``tests`` for the ``code`` reward.

- MBPP (``text`` or ``prompt``, ``test_list``, optional ``test_setup_code``/``test_imports``, ``code``): the task
  text and its first test make the prompt; ``test_list`` are the tests.
- HumanEval (``prompt``, ``test``, ``entry_point``, ``canonical_solution``): the function stub makes the prompt;
  the asserts of ``check(candidate)`` become one test each (``candidate`` named by ``entry_point``), or the whole
  ``check`` is one test when it does more than assert.
"""

from __future__ import annotations

import ast
from pathlib import Path

FORMATS = ("auto", "mbpp", "humaneval")
_FILES = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
SYSTEM_PROMPT = ("You are a careful Python programmer. Answer with the complete solution in one ```python code "
                 "block.")


def detect_format(columns) -> str | None:
    have = set(columns)
    if {"prompt", "test", "entry_point"} <= have:
        return "humaneval"
    if "test_list" in have and ({"text", "prompt"} & have):
        return "mbpp"
    return None


def mbpp_row(row: dict) -> tuple[str, list[str]]:
    setup = "\n".join(filter(None, [row.get("test_setup_code") or "", *(row.get("test_imports") or [])]))
    tests = [f"{setup}\n{test}" if setup.strip() else test for test in row["test_list"]]
    text = row.get("text") or row.get("prompt") or ""
    example = row["test_list"][0] if row["test_list"] else ""
    return f"{text.strip()}\nYour code should pass this test:\n{example}", tests


def humaneval_row(row: dict) -> tuple[str, list[str]]:
    prompt = f"Complete this Python function:\n```python\n{row['prompt'].rstrip()}\n```"
    return prompt, humaneval_tests(row["test"], row["entry_point"])


def humaneval_tests(test: str, entry_point: str) -> list[str]:
    """One test per assert of ``check(candidate)`` when that is all it holds, else the whole check as one test."""
    whole = [f"{test}\ncheck({entry_point})"]
    try:
        module = ast.parse(test)
    except SyntaxError:
        return whole
    checks = [node for node in module.body if isinstance(node, ast.FunctionDef) and node.name == "check"]
    others = [node for node in module.body if node not in checks and not _is_metadata(node)]
    if len(checks) != 1 or not checks[0].args.args or not all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in others):
        return whole
    body = [node for node in checks[0].body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]
    if not body or not all(isinstance(node, ast.Assert) for node in body):
        return whole
    candidate = checks[0].args.args[0].arg
    imports = "".join(ast.unparse(node) + "\n" for node in others)

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            return ast.copy_location(ast.Name(entry_point, node.ctx), node) if node.id == candidate else node

    return [imports + ast.unparse(Rename().visit(node)) for node in body]


def _is_metadata(node) -> bool:
    return isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) and t.id == "METADATA" for t in node.targets)


def load_code_hub(name=None, path=None, config=None, split="test", format="auto", size=None, shuffle=False, seed=0,
                  system_prompt=SYSTEM_PROMPT):
    """MBPP- or HumanEval-style rows as ``prompt`` (chat messages) and ``tests``, via ``datasets.load_dataset``."""
    from datasets import load_dataset
    from grpo_core import UsageError

    from grpo_reward_code.tasks import messages

    if bool(name) == bool(path):
        raise UsageError("dataset 'code-hub' needs one of name=ORG/NAME (a hub id or dataset folder) or path=FILE")
    if path:
        file = Path(path)
        builder = _FILES.get(file.suffix.lower())
        if not file.is_file() or builder is None:
            raise UsageError(f"code-hub file '{path}' must be an existing {', '.join(_FILES)} file")
        where = f"file '{path}'"
        loader = lambda: load_dataset(builder, data_files={split: str(file)}, split=split)  # noqa: E731
    else:
        where = f"'{name}'" + (f" (config '{config}')" if config else "")
        loader = lambda: load_dataset(name, config, split=split)  # noqa: E731
    try:
        dataset = loader()
    except Exception as error:
        first = (str(error).strip() or type(error).__name__).splitlines()[0]
        raise UsageError(f"could not load code dataset {where}, split '{split}': {first}") from None
    kind = detect_format(dataset.column_names) if format == "auto" else format
    if kind is None:
        raise UsageError(
            f"code dataset {where} has neither MBPP columns (text, test_list) nor HumanEval columns (prompt, test, "
            f"entry_point); it has {', '.join(dataset.column_names)}; for other layouts use the 'hub' dataset with "
            "columns=tests=COLUMN")
    needed = {"mbpp": {"test_list"}, "humaneval": {"prompt", "test", "entry_point"}}[kind]
    missing = needed - set(dataset.column_names)
    if missing:
        raise UsageError(f"code dataset {where} lacks the {kind} column(s) {', '.join(sorted(missing))}; "
                         f"it has {', '.join(dataset.column_names)}")
    if shuffle:
        dataset = dataset.shuffle(seed=seed)
    if size is not None:
        dataset = dataset.select(range(min(size, len(dataset))))
    convert = mbpp_row if kind == "mbpp" else humaneval_row

    def to_row(row):
        text, tests = convert(row)
        return {"prompt": messages(system_prompt, text), "tests": tests}

    return dataset.map(to_row, remove_columns=dataset.column_names)
