"""``grpo-run new-plugin``: names, errors, and packages that install and pass their own tests unmodified."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from grpo_core.cli import cli
from grpo_core.errors import UsageError
from grpo_core.plugins.scaffold import KINDS, plugin_names, render, write_plugin


def run(*args):
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize(
    "name, kind, expected",
    [
        ("grpo-reward-brevity", "reward", ("grpo_reward_brevity", "brevity")),
        ("Grpo_Reward.Tone", "reward", ("grpo_reward_tone", "tone")),
        ("grpo-dataset-riddles", "dataset", ("grpo_dataset_riddles", "riddles")),
        ("grpo-a100", "profile", ("grpo_a100", "a100")),
        ("acme-score", "reward", ("acme_score", "acme-score")),
        ("grpo-reward-terse", "reward-text", ("grpo_reward_terse", "terse")),
        ("grpo-env-sandbox", "environment", ("grpo_env_sandbox", "sandbox")),
        ("grpo-word-tools", "environment", ("grpo_word_tools", "word-tools")),
        ("grpo-reward-", "reward", None),
    ],
)
def test_names(name, kind, expected):
    if expected is None:
        with pytest.raises(UsageError, match="not a valid distribution name"):
            plugin_names(name, kind)
        return
    names = plugin_names(name, kind)
    assert (names.module, names.name) == expected
    assert names.distribution == name


@pytest.mark.parametrize(
    "args, message",
    [
        (["bad name"], "'bad name' is not a valid distribution name"),
        (["-lead"], None),  # click reads it as an option: still a usage error, exit code 2
        (["9lives"], "'9lives' gives the module name '9lives', which Python cannot import"),
        (["class"], "'class' gives the module name 'class', which Python cannot import"),
        (["json"], "a module named 'json' already exists"),
        (["grpo-core"], "a module named 'grpo_core' already exists"),
        (["grpo-x", "--kind", "model"], "Invalid value for '--kind'"),
    ],
)
def test_bad_names_are_one_line_with_exit_code_2(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, output = run("new-plugin", *args)
    assert code == 2, output
    if message:
        errors = [line for line in output.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and message in errors[0], output
    assert not any(tmp_path.iterdir())


def test_refuses_a_non_empty_folder(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    code, output = run("new-plugin", "grpo-reward-brevity", "--dir", str(tmp_path))
    assert code == 2
    assert f"Error: folder '{tmp_path}' already exists and is not empty; give --dir a new or empty folder" in output.splitlines()
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_writes_into_an_empty_folder_and_names_the_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    code, output = run("new-plugin", "grpo-reward-brevity", "--dir", "empty")
    assert code == 0, output
    files = sorted(p.relative_to(tmp_path / "empty").as_posix() for p in (tmp_path / "empty").rglob("*") if p.is_file())
    assert files == [".gitignore", "README.md", "grpo_reward_brevity/__init__.py", "grpo_reward_brevity/degenerate.py",
                     "grpo_reward_brevity/properties.py", "grpo_reward_brevity/reward.py", "pyproject.toml",
                     "tests/conftest.py", "tests/test_plugin.py"]
    for file in files:
        assert f"empty/{file}" in output
        assert "{{" not in (tmp_path / "empty" / file).read_text(), file


@pytest.mark.parametrize("kind", KINDS)
def test_pyproject_declares_the_entry_point(kind, tmp_path):
    import tomllib

    folder, _ = write_plugin("grpo-thing", kind, tmp_path / "out")
    project = tomllib.loads((folder / "pyproject.toml").read_text())
    assert project["project"]["name"] == "grpo-thing"
    assert project["project"]["entry-points"]["grpo"] == {"thing": "grpo_thing"}
    assert project["project"]["dependencies"][0].startswith("grpo-core")
    source = (folder / "grpo_thing" / "__init__.py").read_text()
    assert f"def register_{kind.split('-')[0]}s(register):" in source and "@hookimpl" in source


def test_render_refuses_unknown_placeholders():
    assert render("{{a}}-{{b}}", {"a": "1", "b": "2"}) == "1-2"
    with pytest.raises(KeyError, match="'c'"):
        render("{{c}}", {})


def test_the_command_is_registered_by_grpo_core():
    import click

    from grpo_core.plugins import get_registry

    code, output = run("--help")
    assert "new-plugin" in output
    registry = get_registry(refresh=True)
    registry.add_commands(click.Group())
    (info,) = [i for i in registry.plugins if "new-plugin" in i.registers["commands"]]
    assert (info.name, info.distribution) == ("grpo_core.builtin", "grpo-core")


@pytest.mark.parametrize("name, expected", [("sandbox", "Sandbox"), ("word-tools", "WordTools"), ("2048", "Env2048"),
                                             ("param", "EnvParam"), ("environment-spec", "EnvEnvironmentSpec")])
def test_an_environment_class_is_named_after_the_plugin(name, expected):
    names = plugin_names(f"grpo-env-{name}", "environment")
    assert names.class_name == expected and expected.isidentifier()


def test_an_environment_plugin_says_how_to_check_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, output = run("new-plugin", "grpo-env-sandbox", "--kind", "environment")
    assert code == 0, output
    assert output.splitlines()[-2:] == ["  grpo-run environments", "  grpo-run check --env sandbox --dataset sandbox-tasks"]
    source = (tmp_path / "grpo-env-sandbox" / "grpo_env_sandbox" / "environment.py").read_text()
    assert "class Sandbox:" in source and "def get_reward(self)" in source


def test_the_plugin_authors_guide_shows_the_generated_environment(tmp_path):
    """docs/plugin-authors.md, "Write an environment": its outline of the class and its spec are the generated ones."""
    import re

    folder, _ = write_plugin("grpo-env-reverser", "environment", tmp_path / "out")
    guide = (Path(__file__).resolve().parents[1] / "docs" / "plugin-authors.md").read_text()
    section = guide.split("## Write an environment", 1)[1].split("\n## ", 1)[0]
    spec = re.search(r"```python\n(ENVIRONMENT = EnvironmentSpec\(.*?\n\))\n```", section, re.S).group(1)
    assert spec in (folder / "grpo_env_reverser" / "__init__.py").read_text()
    outline = re.search(r"```python\n(class Reverser:\n.*?)```", section, re.S).group(1)
    source = (folder / "grpo_env_reverser" / "environment.py").read_text()
    methods = re.findall(r"^    (def .*?:) \.\.\.", outline, re.M)
    assert len(methods) == 5 and all(f"\n    {method}\n" in source for method in methods), methods


def scaffolded(kind: str) -> str:
    """The distribution name a test scaffolds for ``kind``: grpo-<kind>-scaffolded, or grpo-env-scaffolded."""
    return "grpo-env-scaffolded" if kind == "environment" else f"grpo-{kind}-scaffolded"


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_generated_package_installs_and_passes_its_tests(kind, tmp_path):
    """pip install the package as written, then run its own tests against the installed copy."""
    folder, _ = write_plugin(scaffolded(kind), kind, tmp_path / "package")
    _install_and_run_its_tests(folder, kind, tmp_path)


# A different text reward: the share of non-empty lines that are bullet points.
BULLETS_SCORE = '''
def score(completion, *, tag="answer"):
    """The share of non-empty lines that start with '- '."""
    lines = [line for line in completion.splitlines() if line.strip()]
    return sum(line.lstrip().startswith("- ") for line in lines) / len(lines) if lines else 0.0
'''
BULLETS_PAIRS = '''
def better_worse(params):
    return [("- a\\n- b", "a\\nb"), ("- a\\n- b", "- a\\nb"), ("- a", "")]


def best(params):
    return "- one\\n- two"


'''


@pytest.mark.slow
def test_text_reward_tests_follow_a_changed_score(tmp_path):
    """The reward-text tests read the spec's declarations, so a new score with its own pairs passes them unchanged."""
    folder, _ = write_plugin("grpo-reward-text-scaffolded", "reward-text", tmp_path / "package")
    reward = folder / "grpo_reward_text_scaffolded" / "reward.py"
    source = reward.read_text()
    start, end = source.index("def score("), source.index("\n\n\ndef validate_params(")
    reward.write_text(source[:start] + BULLETS_SCORE.strip() + source[end:])
    properties = folder / "grpo_reward_text_scaffolded" / "properties.py"
    source = properties.read_text()
    start, end = source.index("def better_worse("), source.index("def pairs(")
    properties.write_text(source[:start] + BULLETS_PAIRS.lstrip() + source[end:])
    _install_and_run_its_tests(folder, "reward-text", tmp_path)


def _install_and_run_its_tests(folder, kind, tmp_path):
    site = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(site), str(folder)],
        capture_output=True, text=True, timeout=300,
    )
    assert install.returncode == 0, install.stderr
    names = plugin_names(scaffolded(kind), kind)
    assert (site / names.module / "__init__.py").exists()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "HF_HUB_OFFLINE": "1"}
    for variable in ("GRPO_LOAD_PLUGINS", "GRPO_DISABLE_PLUGINS"):
        env.pop(variable, None)
    # Run from a folder without the sources, so the tests import the installed package.
    tests = tmp_path / "tests"
    (folder / "tests").rename(tests)
    result = subprocess.run(
        # Its own basetemp: a nested session must not clean up the outer session's numbered temp folders.
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "basetemp"),
         "--rootdir", str(tmp_path), str(tests)],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "skipped" not in result.stdout
    listed = subprocess.run([sys.executable, "-m", "grpo_core", f"{kind.split('-')[0]}s", "--json"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert f'"distribution": "{names.distribution}"' in listed.stdout, listed.stdout + listed.stderr


@pytest.mark.parametrize("kind, modules", [("reward", ["degenerate", "properties", "reward"]),
                                           ("reward-text", ["degenerate", "properties", "reward"]),
                                           ("dataset", ["dataset"]), ("environment", ["dataset", "environment"]),
                                           ("profile", [])])
def test_writes_the_one_plugin_layout(kind, modules, tmp_path):
    folder, _ = write_plugin("grpo-thing", kind, tmp_path / "out")
    package = folder / "grpo_thing"
    assert sorted(p.stem for p in package.glob("*.py") if p.stem != "__init__") == modules
    if "properties" in modules:
        last = (package / "properties.py").read_text().rstrip().split("\n\n\n")[-1]
        assert last.startswith("CHECKS = RewardChecks(") and "checks=CHECKS" in (package / "__init__.py").read_text()
    if kind == "dataset":
        spec = (package / "__init__.py").read_text()
        assert 'load="grpo_thing.dataset:load"' in spec and "def " not in spec.split("SPEC = ")[1].split("@hookimpl")[0]
        assert all(f'dataset_param("{name}"' in spec for name in ("split", "size", "seed", "system_prompt"))
    if kind == "environment":
        spec = (package / "__init__.py").read_text()
        assert "factory=Thing," in spec and "gold_episode=gold_episode," in spec and 'load="grpo_thing.dataset:load"' in spec
