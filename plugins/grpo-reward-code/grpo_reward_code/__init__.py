"""Reward ``code`` (run the completion's program against the row's tests, in a sandbox) and the datasets
``code-tasks`` (generated, offline) and ``code-hub`` (MBPP- and HumanEval-style columns). For other plugins,
``run_program`` runs one program as a script in the same sandbox (the ``python`` environment's tool uses it).

Importing this module is cheap: datasets and hypothesis are imported only inside the functions that use them.
"""

from __future__ import annotations

from grpo_core import DatasetSpec, Param, RewardSpec, dataset_param, hookimpl

from grpo_reward_code.hub import FORMATS
from grpo_reward_code.hub import SYSTEM_PROMPT as HUB_SYSTEM_PROMPT
from grpo_reward_code.properties import CHECKS
from grpo_reward_code.reward import code_reward, validate_params
from grpo_reward_code.runner import ProgramRun, run_program, sandbox_problem
from grpo_reward_code.sandbox import SANDBOXES
from grpo_reward_code.tasks import SPLITS, SYSTEM_PROMPT

__all__ = ["SPEC", "ProgramRun", "code_reward", "register_datasets", "register_rewards", "run_program",
           "sandbox_problem"]

SPEC = RewardSpec(
    name="code",
    description="The share of the row's tests the completion's Python program passes, run in a sandbox "
    "(1 or 0 with strict); 0 without a program; None for a row without tests",
    func=code_reward,
    bounds=(0.0, 1.0),
    columns=("tests",),
    batched=True,
    timeout=10.0,  # one program and all its tests, wall-clock; also its CPU limit
    params=(
        Param("tests_column", "tests", str, "the dataset column holding the tests: assert statements, or "
              "{input, output} pairs, as a list or its JSON text"),
        Param("language", "python", str, "the fence language of the program's block (python also takes py and "
              "python3); empty takes the last fenced block of any language"),
        Param("tag", "", str, "when set, only the last <tag>...</tag> is searched, and its content is the program "
              "when it holds no fenced block"),
        Param("strict", False, bool, "1.0 only when every test passes, else 0.0"),
        Param("timeout", 10.0, float, "wall-clock seconds for one program and all its tests; its CPU-time limit is a second more"),
        Param("memory_mb", 1024, int, "address-space limit of the program's processes (RLIMIT_AS), in MiB",
              minimum=64, maximum=1 << 20),
        Param("file_size_mb", 16, int, "largest file the program may write (RLIMIT_FSIZE), in MiB; its temporary "
              "folder holds twice that", minimum=1, maximum=1 << 16),
        Param("processes", 32, int, "most processes the program may run at once (RLIMIT_NPROC)", minimum=2,
              maximum=4096),
        Param("open_files", 64, int, "most open files per process (RLIMIT_NOFILE)", minimum=16, maximum=65536),
        Param("output_kb", 1024, int, "output read from a program before it is stopped, in KiB", minimum=1,
              maximum=1 << 20),
        Param("sandbox", "bubblewrap", str, "bubblewrap: namespaces, no network, an empty temporary folder; none: "
              "only limits and a clean environment (prints a warning)", SANDBOXES, unsafe=("none",)),
        Param("workers", 0, int, "programs run at once in threads of the training process; 0: in the run's "
              "shared worker processes (--reward-workers, one per core by default; or a Ray cluster with "
              "--reward-backend ray)", minimum=0, maximum=256),
    ),
    checks=CHECKS,
    validate=validate_params,
)


CODE_TASKS = DatasetSpec(
    "code-tasks",
    "Generated Python function-writing tasks with assert tests (offline, seeded; ten task families)",
    load="grpo_reward_code.tasks:load_code_tasks",
    columns=("prompt", "tests"),
    params=(
        dataset_param("split", choices=SPLITS),
        dataset_param("size", 500, minimum=1, maximum=100_000),
        dataset_param("seed"),
        dataset_param("system_prompt", SYSTEM_PROMPT),
    ),
)

CODE_HUB = DatasetSpec(
    "code-hub",
    "MBPP- or HumanEval-style code tasks from the hub or a local file, as prompt, tests (scored) and "
    "shown_tests (in the prompt, not scored)",
    load="grpo_reward_code.hub:load_code_hub",
    columns=("prompt", "tests", "shown_tests"),
    params=(
        Param("name", None, str, "hub dataset id (e.g. google-research-datasets/mbpp, openai/openai_humaneval) or "
              "a local dataset folder"),
        Param("path", None, str, "instead of name: a local jsonl, json, csv or parquet file in one of the formats"),
        Param("config", None, str, "the dataset's configuration, e.g. sanitized for MBPP"),
        dataset_param("split", "test"),
        Param("format", "auto", str, "which columns to read: auto tells MBPP from HumanEval by the columns", FORMATS),
        dataset_param("size", minimum=1),
        dataset_param("shuffle"),
        dataset_param("seed"),
        dataset_param("system_prompt", HUB_SYSTEM_PROMPT),
        Param("shown", 1, int, "MBPP: how many of a row's tests the prompt shows; shown tests are not scored, and "
              "one test always stays hidden (0 names the function instead)", minimum=0, maximum=100),
    ),
)


@hookimpl
def register_rewards(register):
    register(SPEC)


@hookimpl
def register_datasets(register):
    register(CODE_TASKS)
    register(CODE_HUB)
