"""``grpo-run new-plugin``: write a plugin package (reward, dataset, environment or profile) that installs and passes
its tests.

The package has a pyproject.toml with the ``grpo`` entry point, the layout every shipped plugin follows
(``__init__.py`` with the spec and the hook and no other code; for a reward ``reward.py`` with the function
the spec names as an object and its ``validate_params`` beside it, ``properties.py`` ending in
``CHECKS = RewardChecks(...)`` and ``degenerate.py``; for a dataset ``dataset.py``; for an environment
``environment.py`` with the class and its gold episode, and ``dataset.py`` with tasks to use it on), a README, and
tests: ``tests/conftest.py`` (the hub offline, the registry fresh) and ``tests/test_plugin.py`` (for a reward:
grpo-core's property suite through the ``grpo_check`` pytest fixture; for an environment: its checks through
``grpo_core.testing.check_environment``). Templates live in
``grpo_core/plugins/templates/<kind>/``; tests/test_plugin_layout.py holds the shipped plugins to the same layout.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from grpo_core.errors import UsageError

# reward-text: a reward that reads only the completion, with tests derived from its declarations.
KINDS = ("reward", "reward-text", "dataset", "environment", "profile")

# Output path -> template path ({kind} and {module} filled in), for every kind.
FILES = {
    "pyproject.toml": "common/pyproject.toml.tmpl",
    ".gitignore": "common/gitignore.tmpl",
    "README.md": "{kind}/README.md.tmpl",
    "{module}/__init__.py": "{kind}/module.py.tmpl",
    "tests/conftest.py": "common/conftest.py.tmpl",
    "tests/test_plugin.py": "{kind}/test_plugin.py.tmpl",
}
# The package's other modules, in the one plugin layout: each is written from {kind}/<module>.py.tmpl.
MODULES = {
    "reward": ("reward", "properties", "degenerate"),
    "reward-text": ("reward", "properties", "degenerate"),
    "dataset": ("dataset",),
    "environment": ("environment", "dataset"),
    "profile": (),
}

DESCRIPTIONS = {
    "reward": "A {name} reward for GRPO training with grpo-core",
    "reward-text": "A {name} reward for GRPO training with grpo-core",
    "dataset": "A {name} dataset for GRPO training with grpo-core",
    "environment": "A {name} environment (tools for the model to call) for GRPO training with grpo-core",
    "profile": "A {name} hardware profile for GRPO training with grpo-core",
}

# The distribution-name prefix each kind's plugins are named with (the name users type is what follows it);
# a kind not listed uses grpo-KIND-. Any distribution name is accepted: a name without its prefix loses "grpo-".
PREFIXES = {"environment": "grpo-env-"}

# What to run after ``pip install -e ".[test]"`` and ``python -m pytest``, beyond them, by kind.
NEXT_STEPS = {
    "environment": ("grpo-run environments", "grpo-run check --env {name} --dataset {name}-tasks"),
}

# PEP 508 project names: letters, digits, and . _ - inside.
_DISTRIBUTION = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
# Names the generated modules and tests use beside the class: a class named like one would shadow it.
_TAKEN_CLASS_NAMES = {"DatasetSpec", "EnvironmentSpec", "Param", "PaysAnySubmission"}


@dataclass(frozen=True)
class PluginNames:
    """The three names of a new plugin: ``grpo-reward-brevity`` -> ``grpo_reward_brevity``, ``brevity``."""

    distribution: str
    module: str
    name: str  # what it registers, as users type it: --reward brevity

    @property
    def class_name(self) -> str:
        """A Python class name for what the plugin registers (an environment's class): ``word-tools`` ->
        ``WordTools``, and ``Env2048`` for a name that does not start with a letter."""
        words = "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", self.name) if part)
        return words if words[:1].isalpha() and words not in _TAKEN_CLASS_NAMES else f"Env{words}"


def plugin_names(distribution: str, kind: str = "reward") -> PluginNames:
    """Derive the module and plugin names from a distribution name, or raise a UsageError saying why not."""
    if not _DISTRIBUTION.match(distribution or ""):
        raise UsageError(
            f"'{distribution}' is not a valid distribution name: use letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit, e.g. grpo-reward-brevity"
        )
    module = re.sub(r"[-.]+", "_", distribution).lower()
    if not module.isidentifier() or keyword.iskeyword(module) or module[0].isdigit():
        raise UsageError(
            f"'{distribution}' gives the module name '{module}', which Python cannot import; "
            "start the name with a letter, e.g. grpo-reward-brevity"
        )
    name = re.sub(r"[-_.]+", "-", distribution).lower()
    for prefix in (PREFIXES.get(kind, f"grpo-{kind.split('-')[0]}-"), "grpo-"):
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix):]
            break
    return PluginNames(distribution, module, name)


def _validate_module_is_free(module: str) -> None:
    import importlib.util

    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        found = None
    if found is not None:
        where = found.origin or ", ".join(found.submodule_search_locations or []) or "a built-in module"
        raise UsageError(
            f"a module named '{module}' already exists ({where}); a plugin package with that name would "
            "shadow it or be shadowed; choose another name"
        )


def _core_requirement() -> str:
    from importlib import metadata

    try:
        version = metadata.version("grpo-core")
    except metadata.PackageNotFoundError:
        return "grpo-core"
    major_minor = ".".join(version.split(".")[:2])
    return f"grpo-core>={major_minor}"


def render(template: str, values: dict[str, str]) -> str:
    """``template`` with each ``{{key}}`` replaced by ``values[key]``."""
    def replace(match: re.Match) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"template placeholder '{key}' has no value")
        return values[key]

    return re.sub(r"\{\{(\w+)\}\}", replace, template)


def write_plugin(distribution: str, kind: str = "reward", directory: str | Path | None = None) -> tuple[Path, list[Path]]:
    """Write a new plugin package; return its folder and the files written, in order.

    ``directory`` defaults to a folder named after the distribution in the current directory; it
    must not exist or be empty.
    """
    if kind not in KINDS:
        raise UsageError(f"unknown plugin kind '{kind}'; choose one of: {', '.join(KINDS)}")
    names = plugin_names(distribution, kind)
    _validate_module_is_free(names.module)
    folder = Path(directory) if directory is not None else Path(distribution)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"'{folder}' is a file; give --dir a new or empty folder")
    if folder.is_dir() and any(folder.iterdir()):
        raise UsageError(f"folder '{folder}' already exists and is not empty; give --dir a new or empty folder")
    values = {
        "distribution": names.distribution,
        "module": names.module,
        "name": names.name,
        "class_name": names.class_name,
        "kind": kind,
        "description": DESCRIPTIONS[kind].format(name=names.name),
        "core_requirement": _core_requirement(),
    }
    from importlib import resources  # not at the top: every grpo-run command loads this module, few write a plugin

    templates = resources.files("grpo_core.plugins") / "templates"
    written = []
    files = []
    for target, source in FILES.items():
        files.append((target, source))
        if target == "{module}/__init__.py":
            files += [(f"{{module}}/{name}.py", f"{{kind}}/{name}.py.tmpl") for name in MODULES[kind]]
    for target, source in files:
        text = (templates / source.format(kind=kind)).read_text(encoding="utf-8")
        path = folder / target.format(module=names.module)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(text, values), encoding="utf-8")
        written.append(path)
    return folder, written


def add_command(cli) -> None:
    """Add ``new-plugin`` to the ``grpo-run`` group (grpo-core's built-in plugin calls this from register_commands)."""
    import click

    @cli.command(name="new-plugin")
    @click.argument("name")
    @click.option("--kind", type=click.Choice(KINDS), default="reward", show_default=True,
                  help="What the plugin registers (reward-text: a reward that reads only the completion).")
    @click.option("--dir", "directory", type=click.Path(file_okay=False),
                  help="Folder to write the package in (default: ./NAME); must be new or empty.")
    def new_plugin(name, kind, directory):
        """Write a new plugin package NAME (a distribution name such as grpo-reward-brevity).

        The package has a pyproject.toml with the grpo entry point, the layout grpo-core's own
        plugins follow (__init__.py with the spec and the hook; reward.py, properties.py and
        degenerate.py for a reward; dataset.py for a dataset; environment.py and dataset.py for an
        environment), a README, and tests that pass as written (tests/conftest.py, and
        tests/test_plugin.py: for a reward, grpo-core's property suite through the grpo_check pytest
        fixture; for an environment, the checks of grpo-run check --env). Name an environment
        plugin grpo-env-NAME.
        Install it and run its tests:

        \b
        cd NAME && pip install -e ".[test]" && python -m pytest
        """
        folder, written = write_plugin(name, kind, directory)
        names = plugin_names(name, kind)
        click.echo(f"wrote {kind} plugin '{names.name}' (distribution {names.distribution}, module {names.module}):")
        for path in written:
            click.echo(f"  {path.as_posix()}")
        click.echo("next:")
        click.echo(f"  cd {folder.as_posix()}")
        click.echo('  pip install -e ".[test]"')
        click.echo("  python -m pytest")
        for step in NEXT_STEPS.get(kind, ()):
            click.echo(f"  {step.format(name=names.name)}")
