"""One test per hook in grpo_core/plugins/hookspecs.py, through what users see (tests/test_docs.py requires them)."""

import json

import pytest
from click.testing import CliRunner

from grpo_core import DatasetSpec, EnvironmentSpec, ProfileSpec, ModelSpec, Param, RewardSpec, hookimpl
from grpo_core.plugins import registered


def shouting(completion, *, threshold=0.5):
    letters = [c for c in completion if c.isalpha()]
    return float(bool(letters) and sum(c.isupper() for c in letters) / len(letters) >= threshold)


class Echo:
    def __init__(self, prefix=">"):
        self.prefix = prefix

    def reset(self, **row):
        self.said = []

    def echo(self, text: str) -> str:
        """Say the text back.

        Args:
            text: what to say back

        Returns:
            The text, after the prefix.
        """
        self.said.append(text)
        return f"{self.prefix}{text}"


class Everything:
    """A plugin implementing every hook, registered for one test at a time."""

    @hookimpl
    def register_rewards(self, register):
        register(RewardSpec("shouting", "1 if most letters are capitals", shouting,
                            params=(Param("threshold", 0.5, float, "share of capitals"),)))

    @hookimpl
    def register_datasets(self, register):
        def load(size=3):
            from datasets import Dataset

            return Dataset.from_list([{"prompt": f"say {i}", "answer": str(i)} for i in range(size)])

        register(DatasetSpec("counting", "Say a number", load, columns=("prompt", "answer"),
                             params=(Param("size", 3, int),)))

    @hookimpl
    def register_environments(self, register):
        register(EnvironmentSpec("echo-room", "Says back what it is told", Echo,
                                 params=(Param("prefix", ">", str, "put before each echo"),)))

    @hookimpl
    def register_profiles(self, register):
        register(ProfileSpec("tiny-cpu", "CPU with groups of 2", grpo_config={
            "use_cpu": True, "per_device_train_batch_size": 2, "num_generations": 2}))

    @hookimpl
    def register_models(self, register):
        register(ModelSpec("alias-of-tiny", "Another name for the tiny model", resolve=lambda: "some/where",
                           available=lambda: False))

    @hookimpl
    def register_commands(self, cli):
        import click

        @cli.command(name="hook-test-hello")
        @click.argument("name")
        def hello(name):
            """Greet NAME."""
            click.echo(f"hello {name}")


def invoke(*args):
    from grpo_core.cli import cli

    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def plugin():
    from grpo_core.cli import GrpoGroup, cli

    GrpoGroup._attached = False  # the CLI attaches the commands of the plugins registered now
    try:
        with registered(Everything(), distribution="grpo-everything") as registry:
            yield registry
    finally:
        cli.commands.pop("hook-test-hello", None)
        GrpoGroup._attached = False


def listed(kind):
    return {row["name"]: row for row in json.loads(invoke(kind, "--json"))}


def test_hook_register_rewards(plugin):
    from grpo_core import load_rewards

    assert listed("rewards")["shouting"]["distribution"] == "grpo-everything"
    (reward,) = load_rewards(["shouting"], params={"shouting": {"threshold": "0.9"}})
    assert reward(prompts=["", ""], completions=["HELLO there", [{"role": "assistant", "content": "HELLO"}]]) == [0.0, 1.0]


def test_hook_register_datasets(plugin):
    row = listed("datasets")["counting"]
    assert row["columns"] == ["prompt", "answer"] and row["parameters"] == ["size=3"]
    spec = plugin.dataset("counting")
    assert spec.load(**spec.resolve({"size": "5"}))["answer"] == ["0", "1", "2", "3", "4"]


def test_hook_register_environments(plugin):
    from grpo_core.plugins.loading import load_environments

    row = listed("environments")["echo-room"]
    assert row["tools"] == ["echo"] and row["reward"] == "-" and row["distribution"] == "grpo-everything"
    (environment,) = load_environments(["echo-room"], {"echo-room": {"prefix": "#"}})
    episode = environment.make()
    episode.reset(prompt="x")
    assert episode.echo("hi") == "#hi"


def test_hook_register_profiles(plugin):
    from grpo_core.training.resolve import pick_profile

    assert "tiny-cpu" in listed("profiles")
    profile, reason = pick_profile("tiny-cpu")
    assert profile.grpo_config["num_generations"] == 2 and reason == "selected"


def test_hook_register_models(plugin):
    from grpo_core.plugins.loading import validate_model_name, model_path as resolve_model

    assert listed("models")["alias-of-tiny"]["offline"] is False
    validate_model_name("alias-of-tiny")
    assert resolve_model("alias-of-tiny") == "some/where"


def test_hook_register_commands(plugin):
    assert invoke("hook-test-hello", "world") == "hello world\n"
    info = next(i for i in plugin.plugins if i.distribution == "grpo-everything")
    assert info.registers["commands"] == ["hook-test-hello"]
    assert "hook-test-hello" in invoke("--help")
