"""Regenerate the generated docs and the command output shown in the docs.

    python scripts/gen_docs.py           # rewrite docs/rewards.md, docs/cli.md and every output block
    python scripts/gen_docs.py --check   # exit 1 with a diff when anything is out of date

Generated files: docs/rewards.md (from the registered reward specs, with example scores computed
by the real rewards), docs/cli.md (from the click commands, plugin-registered ones included) and
docs/api.md (from the public names of grpo_core and grpo_core.testing, with their docstrings).

Output blocks: in docs/*.md and README.md, a marker comment followed by a fenced block,

    <!-- output: grpo-run rewards -->
    ```console
    $ grpo-run rewards
    ...
    ```

is refreshed with the real output of the command (stdout and stderr), run in a fresh temporary
folder holding a copy of examples/ (and, for a command that names benchmarks/, its scripts and
measured sweeps). ``VAR=VALUE`` words before the command set its environment
and are not shown. The comparison in --check ignores timings and the order of lines (plugin
discovery order depends on the file system).

Everything runs with the plugins `make demo` and `make test` install (the Makefile's EDITABLE: plugins/*
and the example examples/grpo-reward-repetition), whatever else is installed, a 100-column terminal and
no network, so the output is what a user of `make demo` sees, the same on every machine. The reward
catalogue covers plugins/* only.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 100


def plugin_distributions() -> list[str]:
    """The distribution names of the reward plugins in this repository (plugins/*/pyproject.toml)."""
    names = []
    for path in sorted(ROOT.glob("plugins/*/pyproject.toml")):
        match = re.search(r'^name\s*=\s*"([^"]+)"', path.read_text(), re.MULTILINE)
        if match:
            names.append(match.group(1))
    return sorted(names)


def makefile_distributions() -> list[str]:
    """The distributions the Makefile installs editable (its EDITABLE), grpo-core aside: the docs' plugins."""
    # make itself expands EDITABLE (its wildcard and foreach), so the list cannot drift from what it installs
    words = subprocess.run(["make", "-s", "--no-print-directory", "--eval=print-editable: ; @echo $(EDITABLE)",
                            "print-editable"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    folders = [ROOT / word for word in words if word != "-e"]
    names = {tomllib.loads((folder / "pyproject.toml").read_text())["project"]["name"] for folder in folders}
    return sorted(names - {"grpo-core"})  # grpo-core's built-ins always load


def docs_environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GRPO_") or key == "GRPO_CACHE_DIR"}
    env.update(
        COLUMNS=str(WIDTH), LINES="50", TERM="dumb", NO_COLOR="1", HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1",
        PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="", HF_DATASETS_DISABLE_PROGRESS_BARS="1",
        GRPO_LOAD_PLUGINS=",".join(makefile_distributions()),
    )
    return env


# The process must see the same plugins and terminal as the commands it runs.
if __name__ == "__main__":
    os.environ.update(docs_environment())
    for _key in [k for k in os.environ if k.startswith("GRPO_") and k not in ("GRPO_LOAD_PLUGINS", "GRPO_CACHE_DIR")]:
        del os.environ[_key]


# Example completions per reward: (completion, columns, parameters). The scores shown in the
# catalogue are computed by the installed rewards, never written by hand.
SCHEMA = '{"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name", "age"]}'
# A gsm_symbolic row: its checker reads the first number without its sign, so graded scoring pays -70.
_RG_ROW = {"answer": "70", "task": "gsm_symbolic", "entry": '{"question": "", "answer": "70", "metadata": {}}'}

# Tests as JSON text: a list would be read as one value per completion.
_ADD_TESTS = '["assert add(1, 2) == 3", "assert add(0, 0) == 0", "assert add(-1, 1) == 0", "assert add(2, 2) == 4"]'
_DOUBLE_TESTS = '[{"input": "3\\n", "output": "6"}, {"input": "5\\n", "output": "10"}]'

EXAMPLES = {
    # scored by a judge model server: the catalogue shows no example scores for them
    "judge": [],
    "judge-group": [],
    # scored by the reward model the user names (no default model): its README shows scores of a small one
    "reward-model": [],
    "code": [
        ("```python\ndef add(a, b):\n    return a + b\n```", {"tests": _ADD_TESTS}, {}),
        ("```python\ndef add(a, b):\n    return a - b\n```", {"tests": _ADD_TESTS}, {}),
        ("```python\ndef add(a, b):\n    return a - b\n```", {"tests": _ADD_TESTS}, {"strict": True}),
        ("def add(a, b): return a + b", {"tests": _ADD_TESTS}, {}),
        ("```python\nimport sys\nsys.exit(0)\n```", {"tests": _ADD_TESTS}, {}),
        ("```python\nprint(int(input()) * 2)\n```", {"tests": _DOUBLE_TESTS}, {}),
        ("```python\nprint(6)\n```", {"tests": _DOUBLE_TESTS}, {}),
    ],
    "math": [
        ("<answer>42</answer>", {"answer": "42"}, {}),
        ("6 times 7 is 42.", {"answer": "42"}, {}),
        ("So the result is \\boxed{42}.", {"answer": "42"}, {}),
        ("<answer>41</answer>", {"answer": "42"}, {}),
        ("I am not sure.", {"answer": "42"}, {}),
        ("The answer is \\boxed{0.5}", {"answer": "\\frac{1}{2}"}, {}),
    ],
    "xml-format": [
        ("<reasoning>6 times 7 makes 42</reasoning>\n<answer>42</answer>", {}, {}),
        ("<reasoning>6 times 7 makes 42</reasoning>\n<answer>42</answer> Hope that helps!", {}, {}),
        ("<reasoning>6 times 7</reasoning>\n<answer>42</answer>", {}, {}),
        ("<reasoning>.</reasoning>\n<answer>.</answer>", {}, {}),
        ("<answer>42</answer>", {}, {}),
        ("<reasoning>6 times 7 makes 42", {}, {}),
        ("42", {}, {}),
        ("<answer>42</answer>", {}, {"tags": "answer"}),
    ],
    "length": [
        ("Twenty characters ok", {}, {"target": 20}),
        ("Ten chars.", {}, {"target": 20}),
        ("Ten chars." + " " * 10, {}, {"target": 20}),
        ("Ten chars. Ten chars.", {}, {"target": 20}),
        ("x" * 20, {}, {"target": 20}),
        ("Ten chars.", {}, {"target": 20, "shape": "exponential"}),
    ],
    "reasoning-gym": [
        ("<answer>70</answer>", _RG_ROW, {}),
        ("<answer>-70</answer>", _RG_ROW, {}),
        ("<answer>-70</answer>", _RG_ROW, {"strict": False}),
        ("The answer is 70.", _RG_ROW, {}),
        ("<answer>2,744</answer>", {**_RG_ROW, "answer": "2744", "entry": '{"question": "", "answer": "2744", "metadata": {}}'}, {}),
    ],
    "json-schema": [
        ('{"name": "Ada", "age": 36}', {"schema": SCHEMA, "expected": '{"name": "Ada", "age": 36}'}, {}),
        ('Sure:\n```json\n{"name": "Ada", "age": 36}\n```', {"schema": SCHEMA, "expected": '{"name": "Ada", "age": 36}'}, {}),
        ('{"name": "Ada", "age": 35}', {"schema": SCHEMA, "expected": '{"name": "Ada", "age": 36}'}, {}),
        ('{"name": "", "age": 0}', {"schema": SCHEMA, "expected": '{"name": "Ada", "age": 36}'}, {}),
        ('{"name": "", "age": 0}', {"schema": SCHEMA}, {"expected_column": ""}),
        ('{"name": "Ada", "age": "36"}', {"schema": SCHEMA}, {"expected_column": ""}),
        ("{}", {"schema": SCHEMA}, {"expected_column": ""}),
        ("not JSON at all", {"schema": SCHEMA}, {"expected_column": ""}),
    ],
}


def _code(text: str, limit: int = 70) -> str:
    """Text as inline code inside a table cell: newlines shown as \\n, pipes escaped, long runs shortened."""
    shown = text.replace("\n", "\\n")
    shown = re.sub(r"(.)\1{11,}", lambda m: f"{m.group(1) * 3}...({len(m.group(0))} × {m.group(1)!r})", shown)
    if len(shown) > limit:
        shown = shown[: limit - 3] + "..."
    shown = shown.replace("|", "\\|")
    fence = "``" if "`" in shown else "`"
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}" if shown else "(empty)"


def _md(text: str) -> str:
    """Prose for markdown: angle brackets as entities (so <answer> shows instead of vanishing as HTML)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "/")


def _score(value) -> str:
    return "None" if value is None else f"{value:.4g}"


def rewards_markdown() -> str:
    """docs/rewards.md: every reward of this repository's plugins, from its registered spec."""
    from grpo_core.plugins import get_registry
    from grpo_core.plugins.loading import load_rewards
    from grpo_core.testing import call_reward

    registry = get_registry()
    ours = set(plugin_distributions())
    specs = [spec for name, spec in sorted(registry.items["rewards"].items()) if spec.distribution in ours]
    out = [
        "# Reward catalogue",
        "",
        "<!-- Generated by scripts/gen_docs.py from the registered reward specs; do not edit by hand. -->",
        "",
        "Every reward of the plugins in this repository, as registered: description, bounds, the",
        "dataset columns it reads, its parameters, the direction properties `grpo-run check` verifies,",
        "and scores the real reward gives a few example completions. `grpo-run rewards` lists the",
        "rewards installed on your machine, third-party ones included.",
        "",
        "## None: a completion a reward cannot score",
        "",
        "A reward returns None (or, from a batched reward, `grpo_core.Unscored(reason)`) for a completion",
        "it cannot judge, and the Reward callable also gives None where the reward raised or ran past its",
        "time limit. What TRL then does depends on how many rewards the run has:",
        "",
        "- One reward: the completion's reward is NaN. TRL leaves it out of `reward` and",
        "  `rewards/<name>/mean`, warns that every reward function returned None, and gives it an",
        "  advantage of 0, so it teaches nothing either way.",
        "- Several rewards: TRL adds the weighted rewards with a NaN-ignoring sum, so one reward's None",
        "  counts as 0 in the total whenever another reward scored the completion. With",
        "  `--reward math --reward xml-format`, a completion math cannot judge but that is well",
        "  formatted gets the format reward alone, as if its answer were wrong. Only when every reward",
        "  gives None is the completion left out as above.",
        "",
        "So a None is not skipped when another reward scores the completion. If 0 is the wrong stand-in",
        "for your reward, give the completion the score you mean instead: a batched reward returns",
        "`Unscored(reason, score=x)` (still counted under its reason; `math` does this with 0.0 for an",
        "answer too costly to judge), a per-item reward returns `x`. `grpo-run check` fails a reward",
        "that scores nothing on its generated inputs or on its own gold example.",
        "",
        "Each step, metrics.jsonl and TRL's logs hold, per reward, the number of completions of that",
        "step's generation batch (all processes together) that were not scored:",
        "`rewards/<name>/errors` (the reward raised), `rewards/<name>/timeouts` (past its hard per-item",
        "limit) and `rewards/<name>/unscorable` (None for any other reason). TRL averages a metric over",
        "the generation batches of a logging step, so with `logging_steps` above 1 it is the mean count",
        "per batch. From a two-step run of `math` (timeout 0.5 s) on four rows, one gold answer too",
        "deep to read in time and one empty, two completions each:",
        "",
        "```json",
        '{"step": 1, "rewards/math/mean": 0.0, "reward": 0.0, "rewards/math/errors": 0.0, "rewards/math/timeouts": 2.0, "rewards/math/unscorable": 2.0}',
        "```",
        "",
        "## A rule, a judge or a reward model",
        "",
        "- **A rule** (`math`, `code`, `json-schema`, `xml-format`) when the answer can be checked: a",
        "  number against the gold one, a program against tests, JSON against a schema. It is exact, costs",
        "  microseconds, and `grpo-run check` can hold it to its promises one input at a time.",
        "- **A judge** (`judge`) when only a reading can tell, and a capable instruction model is at hand: it",
        "  grades on a rubric you write, with no training, but every completion is a generation (seconds on",
        "  a CPU), and a small judge cannot tell right from wrong (its README has the figures).",
        "- **A reward model** (`reward-model`) when you have preference pairs, or a model trained on them:",
        "  one forward pass per completion, batched, with no rubric to write. It pays what its training",
        "  data paid, so it is the reward most easily gamed: longer answers, lines that praise the answer,",
        "  text it never saw. Its checks measure those ways (length bias, injection, batch independence,",
        "  agreement with a dataset's labelled pairs) and show the pair that fails; run",
        "  `grpo-run check --reward reward-model --reward-arg reward-model.model=FOLDER` before training.",
        "",
        "A rule and a learned reward combine: `--reward math --reward reward-model` pays the checkable part",
        "exactly and lets the model rank what the rule cannot see.",
        "",
        "| reward | description | install |",
        "|---|---|---|",
    ]
    for spec in specs:
        out.append(f"| [`{spec.name}`](#{spec.name}) | {_md(spec.description)} | `pip install {spec.distribution}` |")
    for spec in specs:
        defaults = {p.name: p.default for p in spec.params}
        out += ["", f"## {spec.name}", "", _md(spec.description) + ".", ""]
        low, high = spec.bounds
        out.append(f"- distribution: `{spec.distribution}`")
        out.append(f"- bounds: {low:g} to {high:g}; default weight {spec.weight:g}")
        columns = spec.required_columns(defaults)
        optional = spec.optional_column_sources(defaults)
        if columns or optional:
            described = []
            for column in [*columns, *optional]:
                remap = f" (from the dataset column named by `{column}_column`)" if f"{column}_column" in defaults else ""
                described.append(f"`{column}`{remap}{', if the dataset has it' if column in optional else ''}")
            out.append("- dataset columns: " + ", ".join(described))
        else:
            out.append("- dataset columns: none (scores the completion alone)")
        if spec.batched:  # called in the caller's process: its time limit is its own, as its timeout says
            limit = f"; its time limit ({spec.timeout:g} s) is the one its `timeout` parameter describes" \
                if spec.timeout is not None else ""
            out.append(f"- scores a whole batch at once, in the process that calls it{limit}")
        elif spec.timeout is not None:
            out.append(f"- runs in worker processes with a hard limit of {spec.timeout:g} s per completion")
        if spec.params:
            out += ["", "Parameters (`--reward-arg " + spec.name + ".NAME=VALUE`, or `reward_args` in a config file):", "",
                    "| parameter | type | default | meaning |", "|---|---|---|---|"]
            for param in spec.params:
                meaning = _md(param.help or "")
                if param.choices:
                    meaning += ("; " if meaning else "") + "one of " + ", ".join(f"`{c}`" for c in param.choices)
                default = "none" if param.default is None else _code(str(param.default), 50)
                out.append(f"| `{param.name}` | {param.type.__name__} | {default} | {meaning} |")
        if spec.checks.directions or spec.checks.gold_example:
            out += ["", "Properties it declares, checked by `grpo-run check` and the `grpo_check` fixture:", ""]
            for direction in spec.checks.directions:
                out.append(f"- {_md(direction.description)}" + (" (strictly)" if direction.strict else ""))
            if spec.checks.gold_example is not None:
                out.append(f"- a gold completion built from the row scores the top bound, {high:g}")
        examples = EXAMPLES.get(spec.name, [])
        if examples:
            out += ["", "Example scores (computed by the reward):", "", "| completion | row | parameters | score |",
                    "|---|---|---|---|"]
            for completion, row, params in examples:
                (reward,) = load_rewards([spec.name], params={spec.name: params} if params else None)
                (score,) = call_reward(reward, [completion], **row)
                row_text = ", ".join(f"{k} = {_code(str(v), 40)}" for k, v in row.items()) or "-"
                params_text = ", ".join(f"`{k}={v}`" for k, v in params.items()) or "defaults"
                out.append(f"| {_code(completion)} | {row_text} | {params_text} | {_score(score)} |")
            if spec.checks.gold_example is not None:
                row = examples[0][1]
                gold = spec.checks.gold_example(dict(row), spec.resolve())
                if isinstance(gold, str):
                    (reward,) = load_rewards([spec.name])
                    (score,) = call_reward(reward, [gold], **row)
                    row_text = ", ".join(f"{k} = {_code(str(v), 40)}" for k, v in row.items()) or "-"
                    out.append(f"| {_code(gold)} (gold) | {row_text} | defaults | {_score(score)} |")
    return "\n".join(out) + "\n"


def cli_markdown() -> str:
    """docs/cli.md: the help of grpo-run and of every subcommand, plugin-registered ones included."""
    import click

    from grpo_core.cli import cli
    from grpo_core.plugins import get_registry
    from grpo_core.settings.declared import settings_table

    settings = {"terminal_width": WIDTH, "max_content_width": WIDTH}
    root = click.Context(cli, info_name="grpo-run", **{**cli.context_settings, **settings})
    names = cli.list_commands(root)  # attaches the plugin commands
    origin = {}
    for info in get_registry().plugins:
        for name in info.registers["commands"]:
            origin[name] = f"{info.name} ({info.distribution})"
    out = [
        "# CLI reference",
        "",
        "<!-- Generated by scripts/gen_docs.py from the click commands; do not edit by hand. -->",
        "",
        "`grpo-run` runs `train` when no command is named, and has commands to list, check and sample. Plugins add",
        "subcommands through the `register_commands` hook (see [hooks.md](hooks.md)); those below marked",
        "*registered by* come from a plugin, grpo-core's own built-in ones included.",
        "",
        "Environment variables:",
        "",
        "| variable | effect |",
        "|---|---|",
        "| `GRPO_LOAD_PLUGINS=dist1,dist2` | load only these plugin distributions (empty: none; grpo-core's built-ins always load) |",
        "| `GRPO_DISABLE_PLUGINS=dist` | do not load these distributions |",
        "| `GRPO_STRICT_PLUGINS=1` | a plugin that fails to import is an error instead of a warning |",
        "| `GRPO_CACHE_DIR` | where built and converted models are kept (default `~/.cache/grpo-core`) |",
        "| `HF_HUB_OFFLINE=1` | never contact the Hugging Face Hub (transformers, datasets) |",
        "",
        "Exit codes: 0 success, 1 a failure (a check failed, training stopped), 2 bad input (a name, value",
        "or file), with a one-line `Error: ...` message.",
        "",
        "## Run settings",
        "",
        "Each setting of a training run, declared once as a field of `Settings` in `grpo_core/settings/declared.py`.",
        "A run layers, field by field: the built-in default run < the hardware profile's GRPOConfig fields < the",
        "config file < the stage being run < the flags, except that the bare default run (no --config, --reward,",
        "--dataset or --model) keeps its GRPOConfig values above the profile's (`grpo_core/settings/layers.py`).",
        "A config file also takes any GRPOConfig field by its own name; `--set FIELD=VALUE` does on the command line.",
        "",
        settings_table(),
        "",
        "## grpo-run",
        "",
        "```text",
        cli.get_help(root),
        "```",
    ]
    for name in names:
        command = cli.get_command(root, name)
        context = click.Context(command, info_name=name, parent=root, **settings)
        out += ["", f"## grpo-run {name}", ""]
        if name in origin:
            out += [f"*Registered by the plugin {origin[name]} through `register_commands`.*", ""]
        out += ["```text", command.get_help(context), "```"]
    return "\n".join(out) + "\n"


def _summary(value) -> str:
    doc = inspect.getdoc(value) or ""
    return " ".join(doc.split("\n\n")[0].split())


def _parameters(function) -> str:
    """``(text, tag='answer')``: a function's parameters without their annotations, which differ between Pythons."""
    parts = []
    for parameter in inspect.signature(function).parameters.values():
        parts.append(str(parameter.replace(annotation=inspect.Parameter.empty)))
    return "(" + ", ".join(parts) + ")"


def api_markdown() -> str:
    """docs/api.md: each public name of grpo_core and grpo_core.testing with its signature and docstring summary."""
    import grpo_core
    import grpo_core.testing

    out = ["# Public API", "",
           "<!-- generated by scripts/gen_docs.py from grpo_core.__all__ and grpo_core.testing.__all__; do not edit -->",
           "",
           "Plugins, examples and scripts import only `grpo_core` and `grpo_core.testing`; every other module",
           "is internal and may change between releases. A test fails when a plugin, an example or a",
           "`new-plugin` template imports anything else, and when a name here loses its docstring.", ""]
    for module in (grpo_core, grpo_core.testing):
        out += [f"## `{module.__name__}`", "", _summary(module), ""]
        for name in sorted(module.__all__, key=str.lower):
            value = getattr(module, name)
            signature = _parameters(value) if inspect.isfunction(value) else ""
            summary = _summary(value) if not isinstance(value, (str, tuple)) else f"Constant ({type(value).__name__})."
            out += [f"- `{name}{signature}`: {summary}"]
        out += [""]
    return "\n".join(out).rstrip() + "\n"


GENERATED = {"docs/rewards.md": rewards_markdown, "docs/cli.md": cli_markdown, "docs/api.md": api_markdown}

MARKER = re.compile(r"<!-- output: (?P<command>.+?) -->\n(?P<block>```[a-z]*\n.*?\n```\n)?", re.DOTALL)


def run_command(command: str) -> tuple[str, str]:
    """(the command as shown, its output) for a marker's command, run in a fresh folder with examples/."""
    words = shlex.split(command)
    env = docs_environment()
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    shown = " ".join(shlex.quote(word) for word in words)
    if words[0] == "grpo-run":
        argv = [sys.executable, "-m", "grpo_core", *words[1:]]
    elif words[0] == "python":
        argv = [sys.executable, *words[1:]]
    else:
        raise SystemExit(f"output marker runs '{words[0]}'; only grpo-run and python commands are supported")
    with tempfile.TemporaryDirectory(prefix="grpo-docs-") as folder:
        shutil.copytree(ROOT / "examples", Path(folder) / "examples",
                        ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", ".pytest_cache", "runs"))
        if any(word.startswith("benchmarks/") for word in words):  # its scripts and the sweeps they read
            shutil.copytree(ROOT / "benchmarks" / "seeds", Path(folder) / "benchmarks" / "seeds")
            for script in (ROOT / "benchmarks").glob("*.py"):
                shutil.copy2(script, Path(folder) / "benchmarks" / script.name)
        result = subprocess.run(argv, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, timeout=600)
        output = result.stdout.replace(os.path.realpath(folder), ".").replace(folder, ".")
        output = output.replace(sys.executable, "python")  # the same on every machine
    output = "\n".join(line.rstrip() for line in output.splitlines())
    return shown, output


def refresh_outputs(text: str) -> str:
    """``text`` with every output block re-run."""
    def replace(match: re.Match) -> str:
        shown, output = run_command(match.group("command"))
        return f"<!-- output: {match.group('command')} -->\n```console\n$ {shown}\n{output}\n```\n"

    return MARKER.sub(replace, text)


def documents_with_outputs() -> list[Path]:
    paths = sorted(ROOT.glob("docs/*.md")) + [ROOT / "README.md"]
    return [p for p in paths if p.exists() and "<!-- output: " in p.read_text()
            and p.relative_to(ROOT).as_posix() not in GENERATED]


def expected() -> dict[str, str]:
    """Every generated or refreshed file's up-to-date text, by path relative to the repository."""
    files = {path: build() for path, build in GENERATED.items()}
    for path in documents_with_outputs():
        files[path.relative_to(ROOT).as_posix()] = refresh_outputs(path.read_text())
    return files


def normalise(text: str) -> list[str]:
    """What --check compares: timings blanked, lines sorted (discovery order varies between machines)."""
    text = re.sub(r"\b\d+(\.\d+)? ?(s|ms|seconds)\b", "N s", text)
    text = re.sub(r"\b\d+(\.\d+)? ?(steps?/s|it/s|s/it)\b", "N/s", text)
    return sorted(line.rstrip() for line in text.splitlines())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 with a diff when a file is out of date")
    options = parser.parse_args()
    stale = 0
    for path, text in expected().items():
        file = ROOT / path
        current = file.read_text() if file.exists() else ""
        if options.check:
            if normalise(current) != normalise(text):
                stale += 1
                diff = difflib.unified_diff(current.splitlines(), text.splitlines(), f"{path} (in the repository)",
                                            f"{path} (regenerated)", lineterm="", n=1)
                print("\n".join(diff))
        elif current != text:
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text)
            print(f"wrote {path}")
    if stale:
        print(f"\n{stale} file(s) out of date; run: python scripts/gen_docs.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
