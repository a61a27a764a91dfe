"""The examples the README and user guide show work as shown.

Their YAML agrees with the example config files it excerpts, and every command of their ```bash and ```console
blocks runs and exits as the page shows: listings, checks, dry runs and mistakes run as written; commands that
train or sample run with the same arguments plus a tiny model and one step (``TRAINING_OVERRIDES``), since what
they show is the command working, not a learning figure. A command no test can run here is listed in ``NOT_RUN``
with why.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "docs" / "user-guide.md"]


def yaml_blocks(path: Path) -> list[dict]:
    blocks = [yaml.safe_load(text) for text in re.findall(r"```yaml\n(.*?)```", path.read_text(), re.S)]
    return [block for block in blocks if isinstance(block, dict)]


def agrees(shown, actual) -> bool:
    """Every key the docs show has the file's value (the docs may leave keys out)."""
    if isinstance(shown, dict):
        return isinstance(actual, dict) and all(k in actual and agrees(v, actual[k]) for k, v in shown.items())
    if isinstance(shown, list):
        return isinstance(actual, list) and len(shown) == len(actual) and all(map(agrees, shown, actual))
    return shown == actual


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_the_staged_yaml_shown_is_the_two_stage_example(doc):
    example = yaml.safe_load((ROOT / "examples" / "configs" / "two-stage.yaml").read_text())
    shown = [block for block in yaml_blocks(doc) if "stages" in block]
    assert shown, f"{doc.name} shows no stages: block"
    for block in shown:
        assert agrees(block["stages"], example["stages"]), (
            f"{doc.name}'s stages differ from examples/configs/two-stage.yaml: {block['stages']}")


# --- every command shown ------------------------------------------------------------------------------------------

COMMAND_BLOCK = re.compile(r"^[ \t]*```(bash|console)\n(.*?)^[ \t]*```", re.S | re.M)


@dataclass(frozen=True)
class DocCommand:
    doc: str
    line: int
    text: str
    output: str = ""  # what a console block shows it print

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {self.text}"


def doc_commands(path: Path) -> list[DocCommand]:
    """Each command of ``path``'s bash and console blocks (a console block's are its ``$`` lines), continuation
    lines joined and trailing comments dropped, in the order the page shows them."""
    text, found = path.read_text(), []
    for match in COMMAND_BLOCK.finditer(text):
        kind, lines = match.group(1), match.group(2).splitlines()
        first = text[:match.start()].count("\n") + 2
        index = 0
        while index < len(lines):
            start, line = index, lines[index].strip()
            index += 1
            if kind == "console" and not line.startswith("$ "):
                continue
            line = line.removeprefix("$ ") if kind == "console" else line
            while line.endswith("\\") and index < len(lines):
                line = f"{line[:-1].rstrip()} {lines[index].strip()}"
                index += 1
            command = re.sub(r"\s+#\s.*$", "", line).strip()
            if not command or command.startswith("#"):
                continue
            output = []
            while kind == "console" and index < len(lines) and not lines[index].startswith("$ "):
                output.append(lines[index])
                index += 1
            found.append(DocCommand(path.relative_to(ROOT).as_posix(), first + start, command, "\n".join(output)))
    return found


# A command's start -> why no test runs it.
NOT_RUN = {
    "make ": "sets up .venv and trains the default run on SmolLM2, or runs this suite: what CI runs (`make test`)",
    "pip install": "changes the environment the tests run in; `make test` installs the same distributions",
    "cd ": "a shell built-in, for the commands after it",
    "python -m pytest": "the scaffolded plugin's own tests, after installing it: tests/test_scaffold.py does both",
    "ray start": "starts a node of a Ray cluster; tests/test_ray_pool.py starts a local one",
    "head=$(scontrol": "a line of a SLURM job script: needs SLURM",
    "srun ": "a SLURM job on two GPU nodes; tests/test_machines.py checks the accelerate launch each machine runs",
    "grpo-run --config train.yaml --machine-rank": "one machine of two; tests/test_machines.py checks its launch",
    "grpo-run --reward judge --reward-arg judge.base_url=http://GPU-NODE": "needs a judge server on GPU-NODE",
    "grpo-run --reward-backend ray --ray-address HEAD:6379": "needs a Ray cluster at HEAD",
    "grpo-run --reward my_rewards.scoring:score": "names the reader's own module; tests/test_by_path.py loads those",
    "python benchmarks/": "a measurement quoted from an idle machine; tests/test_benchmarks.py runs each in --quick mode",
}
# Commands that need a program the machine may lack: a command's start -> the program.
NEEDS = {"grpo-run --reward code": "bwrap"}
# The exit status a page shows, where it is not 0: a command's start -> the status.
EXIT_STATUS = {
    "grpo-run --reward mth ": 2,
    "grpo-run --reward ./my_rewards.py:scor ": 2,
    "python examples/wrong_sign_reward.py": 1,
    "grpo-run check --reward trl.rewards:think_format_reward ": 1,  # it pays empty <think></think>: empty-tags
    "grpo-run check --reward ./examples/rewards/hedged_accuracy.py": 1,  # a planted hedge, shown failing
}
# What a training command gets appended: the tiny local model and one step; a run that compares (--control, or the
# default run) compares on 2 prompts; and, but for --resume, --overwrite: the pages show alternatives, several of
# which train the same folder (the default run's runs/demo).
TRAINING_OVERRIDES = ["--model", "tiny-random", "--max-steps", "1"]
COMPARE_OVERRIDE = ["--compare", "2"]
# grpo-run sample takes several --model, so its models are swapped: the tiny model, and the run the page trained
# first (runs/first) for a run of its own that the page does not train.
SAMPLE_SWAPS = {"smollm2-135m": "tiny-random", "runs/cpu-demo/final": "runs/first/final",
                "runs/calculator/final": "runs/first/final", "-n 50": "-n 2", "--max-new-tokens 128": "--max-new-tokens 16"}
# Files a page's command reads that the page describes but does not ship: the file's name -> its text (None: the
# page's python block that begins "# NAME").
ASSUMED_FILES = {"my_rewards.py": "def score(completion):\n    return 0.0\n", "wordy.py": None}
# Set-up a command needs that an earlier command of its page does not make: its start -> (grpo-run arguments run
# first, the command's own overrides). The user guide's config file example, written to addition.yaml, trains
# runs/addition for one step: a run stopped there, which its --resume continues to step 2.
SET_UP = {"grpo-run --config runs/addition/run_config.yaml --resume": (
    ["--config", "addition.yaml", "--max-steps", "1"], ["--model", "tiny-random", "--max-steps", "2"])}


def starts(command: DocCommand, table: dict):
    return next((value for key, value in table.items() if command.text.startswith(key)), None)


def exit_status(command: DocCommand) -> int:
    return starts(command, EXIT_STATUS) or 0


def is_training(command: DocCommand) -> bool:
    """A command that trains (grpo-run's default command) or samples: run with a tiny model and one step."""
    words = shlex.split(command.text)
    if words[0] != "grpo-run" or "--dry-run" in words or exit_status(command):
        return False
    return len(words) == 1 or words[1].startswith("-") or words[1] == "sample"


def runnable(doc: Path, training: bool) -> list[DocCommand]:
    return [c for c in doc_commands(doc) if starts(c, NOT_RUN) is None and is_training(c) == training]


ALL_COMMANDS = [command for doc in DOCS for command in doc_commands(doc)]


def test_every_command_shown_is_run_or_listed_with_why():
    assert len(ALL_COMMANDS) > 40
    for command in ALL_COMMANDS:
        program = command.text.split()[0]
        assert program in ("grpo-run", "python") or starts(command, NOT_RUN), (
            f"{command}: neither run by this test nor listed in NOT_RUN")
    unused = [key for key in NOT_RUN if not any(c.text.startswith(key) for c in ALL_COMMANDS)]
    assert not unused, f"NOT_RUN lists commands the pages no longer show: {unused}"


def test_the_exit_status_of_every_error_shown_is_expected():
    for command in ALL_COMMANDS:
        if any(line.startswith("Error:") for line in command.output.splitlines()):
            assert exit_status(command) == 2, f"{command}: shows an error, so it must exit 2"
    assert all(any(c.text.startswith(key) for c in ALL_COMMANDS) for key in EXIT_STATUS)


def work_folder(path: Path) -> Path:
    """A folder as a reader's checkout has it for the pages' commands: examples/, and the files they assume."""
    shutil.copytree(ROOT / "examples", path / "examples",
                    ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", ".pytest_cache", "runs"))
    guide = (ROOT / "docs" / "user-guide.md").read_text()
    for name, text in ASSUMED_FILES.items():
        if text is None:
            text = re.search(rf"^```python\n(# {re.escape(name)}.*?)^```", guide, re.S | re.M).group(1)
        (path / name).write_text(text)
    config = next(block for block in re.findall(r"^```yaml\n(.*?)^```", guide, re.S | re.M)
                  if "output_dir: runs/addition" in block)
    (path / "addition.yaml").write_text(config)
    return path


PAGE_ENV = {"HF_HUB_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": "", "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "120"}


def run(words: list[str], folder: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    """``words`` run in ``folder`` as a reader's shell runs them, with none of the suite's GRPO_ settings but its
    model cache. grpo-run runs in this process (grpo_core's own main, as ``python -m grpo_core``), which spares each
    command the seconds of importing torch, transformers and TRL again; tests/test_packaging.py runs the installed
    command. A ``python`` command runs in a process of its own."""
    if words[0] != "grpo-run":
        env = {key: value for key, value in os.environ.items()
               if not key.startswith("GRPO_") or key == "GRPO_CACHE_DIR"}
        return subprocess.run([sys.executable, *words[1:]], cwd=folder, env={**env, **PAGE_ENV},
                              capture_output=True, text=True, timeout=timeout)
    from click.testing import CliRunner

    from grpo_core.cli import cli

    unset = {key: None for key in os.environ if key.startswith("GRPO_") and key != "GRPO_CACHE_DIR"}
    here = os.getcwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(cli, words[1:], env={**unset, **PAGE_ENV}, prog_name="grpo-run")
    finally:
        os.chdir(here)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # An error grpo-run did not turn into a message: never the status a page shows, whatever its number.
        trace = "".join(traceback.format_exception(result.exception))
        return subprocess.CompletedProcess(words, "an uncaught error", result.stdout, result.stderr + trace)
    return subprocess.CompletedProcess(words, result.exit_code, result.stdout, result.stderr)


def as_run(command: DocCommand) -> list[str]:
    """The command's words, with the overrides a training or sampling command runs with here."""
    text = command.text
    if text.startswith("grpo-run sample"):
        for shown, used in SAMPLE_SWAPS.items():
            text = text.replace(shown, used)
        return shlex.split(text)
    words = shlex.split(text.replace(" ...", " --dataset arithmetic"))  # "...": the rest of a run, a dataset here
    if not is_training(command):
        return words
    compares = "--control" in words or len(words) == 1
    fresh = [] if "--resume" in words else ["--overwrite"]  # several train the same folder (runs/demo)
    overrides = (starts(command, SET_UP) or (None, TRAINING_OVERRIDES))[1]
    return words + overrides + (COMPARE_OVERRIDE if compares else []) + fresh


def check(command: DocCommand, folder: Path) -> str | None:
    """None when ``command`` exits as its page shows in ``folder``; else what went wrong."""
    program = starts(command, NEEDS)
    if program and shutil.which(program) is None:
        return None
    for words in [["grpo-run", *SET_UP[key][0]] for key in SET_UP if command.text.startswith(key)]:
        result = run(words, folder)
        if result.returncode:
            return f"{command}: its set-up {words} exited {result.returncode}:\n{result.stderr[-3000:]}"
    words = as_run(command)
    started = time.monotonic()
    result = run(words, folder)
    print(f"{time.monotonic() - started:6.1f} s  {command}")
    if result.returncode != exit_status(command):
        return (f"{command}\n  ran as: {shlex.join(words)}\n  exit status {result.returncode}, the page shows "
                f"{exit_status(command)}\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
    return None


@pytest.fixture(scope="module")
def reader_folder(tmp_path_factory, cache_dir):
    return work_folder(tmp_path_factory.mktemp("reader"))


@pytest.mark.parametrize("command", [c for doc in DOCS for c in runnable(doc, training=False)], ids=str)
def test_a_command_that_trains_nothing_exits_as_shown(command, reader_folder):
    problem = check(command, reader_folder)
    assert problem is None, problem


@pytest.mark.slow
@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_training_command_runs_on_the_tiny_model(doc, tmp_path, cache_dir):
    """The page's training and sampling commands in its order, in one folder (a --resume follows its run)."""
    folder = work_folder(tmp_path)
    commands = runnable(doc, training=True)
    assert commands
    problems = [problem for problem in (check(command, folder) for command in commands) if problem]
    assert not problems, "\n\n".join(problems)
