"""docs/architecture.md stays true: its map names every package and module of the core and nothing that is
gone, every path it mentions exists, and the core imports its own modules at the top of a file (a function-level
import is one the reader cannot see in the import graph, so each one left has its reason here)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import grpo_core

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(grpo_core.__file__).parent
DOC = ROOT / "docs" / "architecture.md"

# Core modules a function imports instead of the module's top, each with why (module -> imported -> reason).
_HEAVY = ("it imports transformers' TrainerCallback and TRL; grpo-run --help and a typo's one-line error must not "
          "load them")
_COMMAND = ("the training stack is imported by the command that trains or samples, when it runs: grpo-run --help and "
            "the listings must not pay for it (tests/test_lazy.py)")
LAZY_CORE_IMPORTS: dict[tuple[str, str], str] = {
    ("grpo_core.pytest_plugin", "grpo_core.testing"): "pytest loads the plugin in every session of every project; "
    "the kit (hypothesis, the CLI) loads only when a test uses the fixture",
    ("grpo_core.training.train", "grpo_core.training.build"): _HEAVY,
    ("grpo_core.training.train", "grpo_core.training.callbacks"): _HEAVY,
    ("grpo_core.training.runner", "grpo_core.training.build"): _HEAVY,
    ("grpo_core.cli", "grpo_core.checks.command"): "grpo-run check loads the property checks (and yaml, through the "
    "config layer) when it runs or shows its help; grpo-run --help lists it by its first line (tests/test_lazy.py)",
    ("grpo_core.cli", "grpo_core.serving.command"): "grpo-run serve loads the reward loading and config layer it "
    "checks its flags with when it runs or shows its help; grpo-run --help lists it by its first line",
    ("grpo_core.cli", "grpo_core.training"): _COMMAND,
    ("grpo_core.cli", "grpo_core.training.runner"): _COMMAND,
    ("grpo_core.cli", "grpo_core.training.sample"): _COMMAND,
    ("grpo_core.rewards.backend", "grpo_core.rewards.ray_pool"): "the Ray backend is an extra (grpo-core[ray]): its "
    "pool loads when a run chooses it, not in every process that scores on this machine",
    ("grpo_core.serving.command", "grpo_core.serving.app"): "FastAPI and uvicorn are an optional extra (serve): "
    "grpo-run --help must not need them, and only the serve command, when it runs, imports them",
}


def map_entries(text: str) -> set[str]:
    """The paths under grpo_core/ that the map (the first text block after '## The map') names."""
    section = text.split("## The map", 1)[1]
    block = section.split("```text", 1)[1].split("```", 1)[0]
    entries, stack = set(), []
    for line in block.splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        name = line.split()[0]
        stack[depth:] = [name]
        path = "".join(stack)
        if path.startswith("grpo_core/"):
            entries.add(path.rstrip("/"))
    return entries


def core_entries() -> set[str]:
    """Every package and module of the core, as paths relative to the repository (a package as its folder, and
    its ``__init__.py`` too when that holds more than a docstring)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(ROOT).as_posix()
        if path.name == "__init__.py":
            found.add(path.parent.relative_to(ROOT).as_posix())
            body = ast.parse(path.read_text(encoding="utf-8")).body
            if body[1:] or (body and not isinstance(body[0], ast.Expr)):
                found.add(relative)
        else:
            found.add(relative)
    return found


def lazy_core_imports() -> list[tuple[str, str, int]]:
    """(module, imported core module, line) for each import of a core module inside a function."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("grpo_core"):
                    found.append((module, node.module, node.lineno))
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name.startswith("grpo_core"):
                            found.append((module, alias.name, node.lineno))
    return found


def test_the_map_names_every_module_of_the_core_and_nothing_else():
    named, present = map_entries(DOC.read_text(encoding="utf-8")), core_entries()
    assert not present - named, f"docs/architecture.md's map leaves out {sorted(present - named)}"
    assert not named - present, f"docs/architecture.md's map names what does not exist: {sorted(named - present)}"


def test_every_path_the_architecture_doc_mentions_exists():
    text = DOC.read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:grpo_core|plugins|tests|docs|scripts|benchmarks|examples)/[\w./<>-]*)`", text))
    assert paths, "the doc names no path in backticks"
    missing = sorted(path for path in paths if "<" not in path and not (ROOT / path).exists())
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_the_map_reader_follows_nesting():
    block = "## The map\n\n```text\ngrpo_core/   x\n  a.py   y\n  b/     z\n    c.py\nplugins/   w\n```\n"
    assert map_entries(block) == {"grpo_core", "grpo_core/a.py", "grpo_core/b", "grpo_core/b/c.py"}


def test_the_core_imports_its_own_modules_at_the_top():
    found = lazy_core_imports()
    unexplained = {f"{module} -> {imported} (line {line})" for module, imported, line in found
                   if (module, imported) not in LAZY_CORE_IMPORTS}
    assert not unexplained, ("imports of core modules inside functions; move them to the top of the module or "
                             f"give the reason in LAZY_CORE_IMPORTS: {sorted(unexplained)}")
    assert len(found) < 20
    assert set(LAZY_CORE_IMPORTS) <= {(module, imported) for module, imported, _ in found}, (
        "a reason names an import that is gone: drop it")
