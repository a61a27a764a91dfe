"""The shape of the core and of every shipped plugin: the core's imports run one way, down its layers; modules import
each other without a cycle; none is past 400 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import grpo_core

PACKAGE = Path(grpo_core.__file__).parent
MAX_LINES = 400
# Modules allowed over MAX_LINES, each with the reason.
OVERSIZED: dict[str, str] = {}


ROOT = PACKAGE.parent

# The core's layers, bottom first. A module imports from its own package and from the layers below its own, never from
# a layer above or from another package of its layer, at the top of the file or inside a function alike.
# docs/architecture.md draws the same order.
LAYERS: list[tuple[str, ...]] = [
    ("errors", "answers", "cache", "offline"),  # what every layer may use: errors, answers read, folders, the hub
    ("settings",),  # user input to a run: settings, plugin parameters, the spellings of names and schedules
    ("rewards",),  # calling a reward: Reward, what it declares, time limits, the worker pool, remote scoring
    ("specs",),  # what plugins register
    ("plugins",),  # the plugin manager, the registry, names (and paths) to rewards, datasets and models
    ("rundir",),  # the output folder: names, claims, records, metrics read back
    ("builtin", "serving"),  # grpo-core's own plugin; grpo-run serve
    ("checks",),  # the property checks and grpo-run check
    ("training",),  # from settings to a trained model
    ("cli",),  # the grpo-run command
    ("testing", "__main__"),  # the author kit; python -m grpo_core
    ("pytest_plugin", "grpo_core"),  # the grpo_check fixture; the public facade (grpo_core/__init__.py)
]
# Every shipped plugin package and the example plugin: the same rules hold inside each of them.
PLUGIN_PACKAGES = sorted(path.parent for path in [*ROOT.glob("plugins/*/*/__init__.py"),
                                                  *ROOT.glob("examples/grpo-reward-repetition/*/__init__.py")]
                         if path.parent.name != "tests")


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every module in ``package`` (a package is its __init__.py)."""
    modules = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The grpo_core modules that module ``name`` imports anywhere in it, function bodies included."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # ``from grpo_core import checks`` imports the module grpo_core.checks; ``import Param`` the package
            found.update(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target
                         for alias in node.names)
    return {module for module in found if module in modules and module != name}


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    modules = module_files(package)
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (Tarjan), as a path that returns to its start."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_path(graph, set(group), group[0]) for group in groups]


def _path(graph: dict[str, set[str]], group: set[str], start: str) -> list[str]:
    """A shortest path from ``start`` back to itself inside ``group``."""
    frontier, came_from = [start], {}
    while frontier:
        following = []
        for node in frontier:
            for other in sorted(graph[node] & group):
                if other == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if other not in came_from:
                    came_from[other] = node
                    following.append(other)
        frontier = following
    return [start]


def layer_of(module: str) -> str:
    """The unit a module's layer is given by: its package under grpo_core, or the top-level module's own name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that runs up the layers, or across to another package of the same layer."""
    level = {unit: index for index, units in enumerate(LAYERS) for unit in units}
    found = []
    for module, imported in sorted(graph.items()):
        here = layer_of(module)
        for other in sorted(imported):
            there = layer_of(other)
            if there != here and level[there] >= level[here]:
                found.append(f"{module} imports {other} ({there} is {'above' if level[there] > level[here] else 'beside'}"
                             f" {here})")
    return found


def test_every_module_of_the_core_has_a_layer():
    units = {layer_of(name) for name in module_files()}
    placed = {unit for units in LAYERS for unit in units}
    assert units <= placed, f"give these a layer in LAYERS (and docs/architecture.md): {sorted(units - placed)}"
    assert placed <= units, f"LAYERS names what no longer exists: {sorted(placed - units)}"


def test_no_module_of_the_core_imports_from_a_layer_above_its_own():
    found = layer_violations(import_graph())
    assert not found, "imports against the layer order (move the code to the layer that owns it):\n" + "\n".join(found)


def test_the_layer_rule_fails_on_an_upward_import_at_the_top_and_inside_a_function(tmp_path):
    package = tmp_path / "grpo_core"
    for folder in ("settings", "rewards", "training", "plugins"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "training" / "train.py").write_text("from grpo_core.settings import names\n")  # down: allowed
    (package / "settings" / "names.py").write_text("def parse():\n    from grpo_core.training import train\n")
    (package / "rewards" / "reward.py").write_text("from grpo_core.plugins import registry\n")
    (package / "plugins" / "registry.py").write_text("")
    assert layer_violations(import_graph(package)) == [
        "grpo_core.rewards.reward imports grpo_core.plugins.registry (plugins is above rewards)",
        "grpo_core.settings.names imports grpo_core.training.train (training is above settings)"]


def test_the_cycle_finder_finds_a_cycle_and_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    modules = module_files()
    # a submodule imported by ``from package.module import name`` counts as that module
    assert "grpo_core.checks.run" in imported_modules("grpo_core.testing", modules["grpo_core.testing"], modules)


def test_grpo_core_imports_have_no_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles in grpo_core: " + "; ".join(" -> ".join(cycle) for cycle in found)


def test_the_checks_do_not_import_the_author_kit():
    graph = import_graph()
    checks = [name for name in graph if name == "grpo_core.checks" or name.startswith("grpo_core.checks.")]
    assert len(checks) > 5
    assert not [name for name in checks if "grpo_core.testing" in graph[name]]


def test_no_module_is_over_400_lines():
    sizes = {path.relative_to(PACKAGE).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in module_files().values()}
    over = {name: lines for name, lines in sizes.items() if lines > MAX_LINES and name not in OVERSIZED}
    assert not over, f"modules over {MAX_LINES} lines (split them by concern): {over}"
    assert set(OVERSIZED) <= set(sizes), "an exception names a module that no longer exists: drop it"


def test_every_plugin_package_is_checked():
    names = {path.name for path in PLUGIN_PACKAGES}
    assert {"grpo_reward_math", "grpo_reward_code", "grpo_reasoning_gym", "grpo_reward_repetition"} <= names


@pytest.mark.parametrize("package", PLUGIN_PACKAGES, ids=lambda path: path.name)
def test_plugin_imports_have_no_cycle(package):
    found = cycles(import_graph(package))
    assert not found, f"import cycles in {package.name}: " + "; ".join(" -> ".join(cycle) for cycle in found)


@pytest.mark.parametrize("package", PLUGIN_PACKAGES, ids=lambda path: path.name)
def test_no_plugin_module_is_over_400_lines(package):
    sizes = {path.relative_to(package).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in module_files(package).values()}
    over = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert not over, f"modules of {package.name} over {MAX_LINES} lines (split them by concern): {over}"


def test_the_cycle_rule_sees_a_function_level_import_inside_a_plugin(tmp_path):
    package = tmp_path / "grpo_reward_loop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from grpo_reward_loop.b import g\n")
    (package / "b.py").write_text("def g():\n    from grpo_reward_loop import a\n")
    assert cycles(import_graph(package)) == [["grpo_reward_loop.a", "grpo_reward_loop.b", "grpo_reward_loop.a"]]
