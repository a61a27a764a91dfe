"""The docs stay true: generated pages and command output are current, every hook is documented and tested."""

import inspect
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from grpo_core.plugins import hookspecs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
HOOKS = sorted(name for name, value in vars(hookspecs).items() if hasattr(value, "grpo_spec"))


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(), re.DOTALL | re.MULTILINE)


def test_the_hook_list_is_read_from_hookspecs():
    assert {"register_rewards", "register_datasets", "register_profiles", "register_models",
            "register_commands"} <= set(HOOKS)


def test_generated_docs_and_command_output_are_current():
    """docs/rewards.md, docs/cli.md and every `<!-- output: ... -->` block match a fresh run."""
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"{result.stdout[-6000:]}\n{result.stderr[-3000:]}"


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_documented_with_its_signature(hook):
    text = (DOCS / "hooks.md").read_text()
    signature = f"## {hook}{inspect.signature(getattr(hookspecs, hook))}"
    assert signature in text.splitlines(), f"docs/hooks.md has no heading '{signature}'"
    section = text.split(signature, 1)[1].split("\n## ", 1)[0]
    docstring = inspect.getdoc(getattr(hookspecs, hook)).replace("``", "`")
    assert docstring in section, f"the {hook} section does not quote its docstring: {docstring}"
    assert "@hookimpl" in section and f"def {hook}(" in section, f"the {hook} section has no example"


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_has_a_test(hook):
    tests = [path for path in (ROOT / "tests").glob("test_*.py")
             if re.search(rf"^def test_hook_{hook}\(", path.read_text(), re.MULTILINE)]
    assert tests, f"no test named test_hook_{hook} in tests/ (see tests/test_hooks.py)"


def test_every_documented_hook_exists():
    headings = re.findall(r"^## (\w+)\(", (DOCS / "hooks.md").read_text(), re.MULTILINE)
    assert sorted(headings) == HOOKS


@pytest.mark.parametrize("index", range(len(python_blocks(DOCS / "hooks.md"))))
def test_hook_reference_examples_register_something(index):
    """Each example in docs/hooks.md is a working plugin module."""
    import click

    from grpo_core.plugins import registered

    source = python_blocks(DOCS / "hooks.md")[index]
    module = types.ModuleType(f"hooks_example_{index}")
    exec(compile(source, f"docs/hooks.md example {index + 1}", "exec"), module.__dict__)
    with registered(module, distribution="docs-example") as registry:
        info = next(i for i in registry.plugins if i.distribution == "docs-example")
        group = click.Group()
        registry.add_commands(group)
        assert info.error is None, info.error
        assert any(info.registers.values()), f"example {index + 1} registered nothing"
        for name in info.registers["rewards"]:
            from grpo_core import load_rewards
            from grpo_core.testing import check_reward

            check_reward(load_rewards([name])[0], max_examples=5, seed=0)
        for name in info.registers["commands"]:
            assert group.commands[name].help


def test_every_config_key_is_in_the_generated_settings_table_the_user_guide_links_to():
    from grpo_core.settings.declared import FILE_KEYS, settings_table

    table = settings_table()
    undocumented = [key for key in FILE_KEYS if f"| `{key}` |" not in table]
    assert not undocumented, f"the settings table lacks: {undocumented}"
    assert "| `stages` |" in table  # read apart from RunSettings, declared all the same
    assert "(cli.md#run-settings)" in (DOCS / "user-guide.md").read_text()


def test_config_examples_in_the_docs_resolve(tmp_path, monkeypatch):
    """Every YAML block in docs/ is a config file grpo-run accepts (names, fields, types)."""
    from grpo_core.training.resolve import resolve
    from grpo_core.settings.layers import settings_from_options
    from grpo_core.training.stages import read_stages

    monkeypatch.chdir(ROOT)
    blocks = [(path.name, block) for path in sorted(DOCS.glob("*.md"))
              for block in re.findall(r"^```yaml\n(.*?)^```", path.read_text(), re.DOTALL | re.MULTILINE)]
    assert blocks
    for index, (name, block) in enumerate(blocks):
        config = tmp_path / f"{index}.yaml"
        config.write_text(block)
        settings = settings_from_options(config_file=str(config))
        read_stages(str(config))  # a stage list, when there is one, is well formed
        if settings.model is not None:
            settings.model = "tiny-random"
        run = resolve(settings, log=lambda message: None)
        assert run.rewards, f"{name}: the config selects no reward"


def test_relative_links_point_to_files():
    for path in [*DOCS.glob("*.md"), ROOT / "examples" / "grpo-reward-repetition" / "README.md"]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", path.read_text()):
            assert (path.parent / target).exists(), f"{path.relative_to(ROOT)} links to missing {target}"


REPOSITORY_PATH = re.compile(r"(?<![\w./-])((?:grpo_core|plugins|examples|benchmarks|scripts|tests|docs|\.ci)/[\w.\-/<>*]*[\w/])")


def missing_repository_paths(text: str) -> list[str]:
    """The paths ``text`` names under a top-level folder of the repository that are not there. ``<name>`` stands for
    any one name (``plugins/<distribution>/``); a path that every plugin's own folder holds (``tests/test_plugin.py``)
    is found under ``plugins/``."""
    missing = []
    for path in REPOSITORY_PATH.findall(text):
        pattern = re.sub(r"<[^>/]+>", "*", path.rstrip("/"))
        if not any(ROOT.glob(pattern)) and not any(ROOT.glob(f"plugins/*/{pattern}")):
            missing.append(path)
    return missing


@pytest.mark.parametrize("doc", [ROOT / "README.md", *sorted(DOCS.glob("*.md"))], ids=lambda p: p.name)
def test_every_repository_path_the_docs_name_exists(doc):
    missing = missing_repository_paths(doc.read_text())
    assert not missing, f"{doc.relative_to(ROOT)} names paths that are not in the repository: {missing}"


def test_a_path_that_moved_is_found_missing():
    assert missing_repository_paths("It runs [`grpo_core/default_run.yaml`](grpo_core/default_run.yaml)") == [
        "grpo_core/default_run.yaml", "grpo_core/default_run.yaml"]
    assert missing_repository_paths("`grpo_core/settings/default_run.yaml`, plugins/<distribution>/tests/conftest.py,"
                                     " tests/test_plugin.py") == []


def test_reward_catalogue_covers_every_reward_of_the_repository():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_docs
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    text = (DOCS / "rewards.md").read_text()
    from grpo_core.plugins import get_registry

    ours = set(gen_docs.plugin_distributions())
    rewards = [name for name, spec in get_registry().items["rewards"].items() if spec.distribution in ours]
    assert rewards
    for name in rewards:
        assert f"\n## {name}\n" in text
        assert name in gen_docs.EXAMPLES, f"scripts/gen_docs.py has no example completions for '{name}'"


def installed_by_make_demo() -> set[str]:
    """The distributions `make demo` installs, read from the pip command it would run (make -n, nothing runs)."""
    import tomllib

    recipe = subprocess.run(["make", "-n", "-B", "demo"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    (line,) = [line for line in recipe.splitlines() if "pip install" in line and " -e " in line]
    folders = re.findall(r"-e\s+(\S+)", line)
    return {tomllib.loads((ROOT / folder / "pyproject.toml").read_text())["project"]["name"] for folder in folders}


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make, as `make demo` does")
def test_the_readme_plugin_list_is_what_make_demo_installs():
    text = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- output: grpo-run plugins -->\n```console\n(.*?)```", text, re.DOTALL).group(1)
    rows = [line.split() for line in block.splitlines()[2:] if line and not line[0].isspace()]
    assert {row[1] for row in rows} == installed_by_make_demo()
