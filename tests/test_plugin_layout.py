"""Every plugin package has the layout `grpo-run new-plugin` writes, and the scaffold writes that layout.

The rules (docs/plugin-authors.md, "What the files do"), read from the source with ast, nothing imported:

- ``__init__.py`` holds the specs and the hook implementations, no other function or class;
- a ``RewardSpec`` names ``func``, ``validate`` and ``observe`` as function objects, never ``"module:function"``
  strings, and its ``validate`` is defined in the module of its ``func`` (``reward.py``, beside the function);
- a plugin that registers a reward has ``reward.py``; one that registers commands keeps them in ``commands.py``;
- ``tests/conftest.py`` calls ``offline_hub()`` and ``fresh_registry_fixture()``;
- ``tests/test_plugin.py`` runs the ``grpo_check`` fixture on every reward spec the plugin registers.
"""

import ast
import tomllib
from pathlib import Path

import pytest

from grpo_core.plugins.scaffold import KINDS, write_plugin

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = sorted([*(p.parent for p in ROOT.glob("plugins/*/pyproject.toml")),
                  ROOT / "examples" / "grpo-reward-repetition"])
SPEC_FUNCTIONS = ("func", "validate", "observe")  # the RewardSpec fields that name a function
CONFTEST_CALLS = ("offline_hub", "fresh_registry_fixture")


def _name(node) -> str:
    """``f`` for ``f`` and ``m.f``: the last name of a call's function or a decorator."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _calls(tree) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def _hooks(tree) -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)
            and any(_name(decorator) == "hookimpl" for decorator in node.decorator_list)}


def _sources(tree) -> dict[str, str]:
    """Each name ``__init__.py`` imports with ``from MODULE import name`` -> MODULE."""
    return {alias.asname or alias.name: node.module for node in tree.body if isinstance(node, ast.ImportFrom)
            for alias in node.names}


def _spec_problems(tree) -> list[str]:
    problems, sources = [], _sources(tree)
    for call in (c for c in _calls(tree) if _name(c.func) in ("RewardSpec", "replace")):
        named = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg in SPEC_FUNCTIONS}
        if _name(call.func) == "RewardSpec" and len(call.args) > 2:
            named.setdefault("func", call.args[2])
        for field, value in named.items():
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                problems.append(f"a RewardSpec names its {field} as the string {value.value!r}: name the function")
        func, validate = named.get("func"), named.get("validate")
        if isinstance(func, ast.Name) and isinstance(validate, ast.Name):
            home, where = sources.get(func.id), sources.get(validate.id) or "__init__.py"
            if where != home:
                problems.append(f"{validate.id} is defined in {where}, not beside {func.id} in {home}: define a "
                                f"reward's validate in the module of its function")
    return problems


def _package_problems(package: Path) -> list[str]:
    tree = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
    hooks = _hooks(tree)
    problems = [f"__init__.py defines {node.name}: it holds only the specs and the hooks; define it in the module "
                f"it belongs to (a reward's validate beside the reward's function, in reward.py)"
                for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and node.name not in hooks]
    problems += _spec_problems(tree)
    if "register_rewards" in hooks and not (package / "reward.py").exists():
        problems.append("it registers a reward but has no reward.py")
    if "register_commands" in hooks and not (package / "commands.py").exists():
        problems.append("it registers commands but has no commands.py to keep them in")
    if (package / "command.py").exists():
        problems.append("it has command.py: a plugin's commands live in commands.py")
    return problems


def _registered_rewards(package: Path) -> list[str]:
    """The names ``register_rewards`` passes to ``register(...)``, e.g. ``SPEC``."""
    hook = _hooks(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))).get("register_rewards")
    if hook is None:
        return []
    return [_name(call.args[0]) for call in _calls(hook) if _name(call.func) == "register" and call.args]


def _test_problems(folder: Path, rewards: list[str]) -> list[str]:
    conftest, test_plugin = folder / "tests" / "conftest.py", folder / "tests" / "test_plugin.py"
    problems = []
    if not conftest.exists():
        problems.append("it has no tests/conftest.py (offline_hub() and fresh_registry_fixture())")
    else:
        called = {_name(call.func) for call in _calls(ast.parse(conftest.read_text(encoding="utf-8")))}
        problems += [f"tests/conftest.py does not call {name}()" for name in CONFTEST_CALLS if name not in called]
    if not test_plugin.exists():
        return [*problems, "it has no tests/test_plugin.py"]
    checked = {_name(call.args[0]) for call in _calls(ast.parse(test_plugin.read_text(encoding="utf-8")))
               if _name(call.func) == "grpo_check" and call.args}
    return problems + [f"tests/test_plugin.py runs no grpo_check({name}, ...)" for name in rewards
                       if name not in checked]


def layout_problems(folder: Path) -> list[str]:
    """How the plugin distribution in ``folder`` differs from the layout the scaffold writes; empty when it has it."""
    project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    (module,) = set(project["project"]["entry-points"]["grpo"].values())
    package = folder / module
    return _package_problems(package) + _test_problems(folder, _registered_rewards(package))


@pytest.mark.parametrize("folder", PLUGINS, ids=lambda folder: folder.name)
def test_plugin_has_the_scaffold_layout(folder):
    assert layout_problems(folder) == []


@pytest.mark.parametrize("kind", KINDS)
def test_the_scaffold_writes_the_layout(kind, tmp_path):
    folder, _ = write_plugin("grpo-layout-probe", kind, tmp_path / "package")
    assert layout_problems(folder) == []


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path.name}: the scaffold changed, update the drift"
    path.write_text(text.replace(old, new, 1))


STUB = "def validate_params(params):\n    pass\n"


def _validate_in_init(package: Path) -> None:
    _edit(package / "__init__.py", "import final_answer, score, validate_params", "import final_answer, score")
    _edit(package / "__init__.py", "SPEC = RewardSpec(", f"{STUB}\n\nSPEC = RewardSpec(")


def _validate_apart(package: Path) -> None:
    _edit(package / "__init__.py", "import final_answer, score, validate_params", "import final_answer, score\n"
          f"from {package.name}.properties import validate_params")
    with open(package / "properties.py", "a") as properties:
        properties.write(f"\n\n{STUB}")


def _lazy_func(package: Path) -> None:
    _edit(package / "__init__.py", "func=score,", f'func="{package.name}.reward:score",')


def _command_py(package: Path) -> None:
    (package / "command.py").write_text("import click\n\n\n@click.command()\ndef hello():\n    pass\n")
    with open(package / "__init__.py", "a") as init:
        init.write(f"\n\n@hookimpl\ndef register_commands(cli):\n    from {package.name}.command import hello\n\n"
                   "    cli.add_command(hello)\n")


def _no_grpo_check(package: Path) -> None:
    _edit(package.parent / "tests" / "test_plugin.py", "grpo_check(SPEC,", "print(SPEC,")


DRIFTS = {  # a drift from the layout -> what the report must say
    _validate_in_init: "__init__.py defines validate_params",
    _validate_apart: "validate_params is defined in grpo_layout_probe.properties, not beside score",
    _lazy_func: "names its func as the string 'grpo_layout_probe.reward:score'",
    _command_py: "it has command.py",
    _no_grpo_check: "tests/test_plugin.py runs no grpo_check(SPEC, ...)",
    (lambda package: (package.parent / "tests" / "conftest.py").unlink()): "it has no tests/conftest.py",
    (lambda package: _edit(package.parent / "tests" / "conftest.py", "fresh_registry = fresh_registry_fixture()", "")):
        "tests/conftest.py does not call fresh_registry_fixture()",
    (lambda package: (package.parent / "tests" / "test_plugin.py").rename(package.parent / "tests" / "test_it.py")):
        "it has no tests/test_plugin.py",
}


@pytest.mark.parametrize("drift, message", DRIFTS.items(), ids=[
    "validate-in-init", "validate-apart", "lazy-func", "command-py", "no-grpo-check", "no-conftest",
    "conftest-without-registry", "no-test-plugin"])
def test_the_check_finds_a_drifted_plugin(drift, message, tmp_path):
    folder, _ = write_plugin("grpo-layout-probe", "reward", tmp_path / "package")
    drift(folder / "grpo_layout_probe")
    problems = layout_problems(folder)
    assert any(message in problem for problem in problems), problems
