"""Environments: a plain TRL environment class (or a registered EnvironmentSpec) selected with --env, checked before
any model loads, given a chat template that renders tools, and trained through TRL's environment_factory with its
episode reward scored as a grpo-core reward."""

import json
import shutil

import pytest
from click.testing import CliRunner

from grpo_core import EnvironmentSpec, Param, hookimpl
from grpo_core.cli import cli
from grpo_core.errors import UsageError
from grpo_core.plugins import registered
from grpo_core.plugins.loading import Environment, load_environments
from grpo_core.training import trl_contract, tools

from cli_helpers import invoke
from test_faults import refused

CALCULATOR = '''
from fractions import Fraction


class Calc:
    """Exact arithmetic as tools."""

    bounds = (0.0, 1.0)

    def __init__(self, places: int = 0):
        self.places = places

    def reset(self, **row):
        self.answer, self.calls = row.get("answer"), 0

    def multiply(self, a: str, b: str) -> str:
        """Multiply two numbers exactly.

        Args:
            a: the first number
            b: the second number

        Returns:
            The product.
        """
        self.calls += 1
        return str(Fraction(a) * Fraction(b))

    def get_reward(self) -> float:
        return float(self.calls > 0)
'''


@pytest.fixture
def calc_file(tmp_path):
    path = tmp_path / "calc.py"
    path.write_text(CALCULATOR)
    return path


@pytest.fixture
def problems(tmp_path):
    path = tmp_path / "problems.jsonl"
    rows = [{"prompt": [{"role": "user", "content": f"What is {a} * {b}?"}], "answer": str(a * b)}
            for a, b in [(123, 456), (789, 12), (34, 56), (77, 88)]]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def env_args(calc, data, out, *extra):
    return ["--env", f"{calc}:Calc", "--reward", "length", "--dataset", "local", "--dataset-arg", f"path={data}",
            "--model", "tiny-random", "--output-dir", out, "--no-preflight", "--set", "num_generations=2",
            "--set", "per_device_train_batch_size=2", "--max-steps", "2", *extra]


def test_a_plain_trl_class_from_a_file_is_an_environment_with_its_tools(calc_file, problems, tmp_path, cache_dir):
    from grpo_core import resolve_model

    args = env_args(calc_file, problems, tmp_path / "out", "--dry-run")
    code, output = invoke(*args)
    assert code == 0, output
    described = json.loads(output[output.index("{"):])
    (environment,) = described["environments"]
    assert environment == {"name": "calc:Calc", "params": {"places": 0}, "tools": ["multiply"]}
    assert described["chat_template"] == "chosen from the model's tokenizer before the model loads"  # an alias
    args[args.index("tiny-random")] = resolve_model("tiny-random")  # a folder: its tokenizer is read
    code, output = invoke(*args)
    described = json.loads(output[output.index("{"):])
    assert described["chat_template"].startswith("TRL's qwen2_5.jinja")  # tiny-random speaks ChatML, no tools
    assert [r["name"] for r in described["rewards"]] == ["length", "calc:Calc"]  # the episode's own reward
    assert described["grpo_config"]["max_tool_calling_iterations"] == 4


def test_env_args_reach_the_class_and_an_unknown_one_is_named(calc_file):
    (environment,) = load_environments([f"{calc_file}:Calc"], {"calc:Calc": {"places": "3"}})
    assert environment.make().places == 3
    with pytest.raises(UsageError, match="environment 'calc:Calc' has no parameter 'digits'; its parameters: places"):
        load_environments([f"{calc_file}:Calc"], {"calc:Calc": {"digits": "3"}})


def test_trl_does_not_see_get_reward_as_a_reward_of_its_own_and_the_episode_is_scored_by_grpo_core(calc_file):
    import inspect

    (environment,) = load_environments([f"{calc_file}:Calc"])
    factory = tools.environment_factory([environment], 5.0, tools.ToolStats())
    instance = factory()
    functions = dict(inspect.getmembers(type(instance), predicate=inspect.isfunction))
    assert "get_reward" not in functions and "multiply" in functions  # as GRPOTrainer lists them
    instance.reset(answer="56088")
    assert instance.get_reward() == 0.0
    instance.multiply("123", "456")
    assert instance.get_reward() == 1.0
    assert not trl_contract.missing()  # the listing it relies on is TRL's


class Slow:
    def reset(self, **row):
        pass

    def wait(self, seconds: float) -> str:
        """Wait a while.

        Args:
            seconds: how long

        Returns:
            "done".
        """
        import time

        time.sleep(seconds)
        return "done"

    def fail(self, text: str) -> str:
        """Fail.

        Args:
            text: anything

        Returns:
            Never.
        """
        raise ValueError(f"cannot {text}")


def test_a_tool_past_its_limit_is_abandoned_counted_and_reported_as_its_failure():
    import time

    from transformers.utils import get_json_schema

    stats = tools.ToolStats()
    spec = EnvironmentSpec("slow", "waits", Slow)
    factory = tools.environment_factory([Environment(spec, {}, "slow")], 0.3, stats)
    episode = factory()
    assert get_json_schema(episode.wait) == get_json_schema(Slow().wait)  # what TRL shows the model is unchanged
    assert episode.wait(0.0) == "done"
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="tool 'wait' took longer than 0.3 s"):
        episode.wait(30.0)
    assert time.monotonic() - started < 2
    with pytest.raises(ValueError, match="cannot go"):  # the tool's own error, as TRL would see it uncalled
        episode.fail("go")
    taken = stats.take()
    assert taken["tools/wait/calls"] == 2 and taken["tools/wait/timeouts"] == 1 and taken["tools/fail/calls"] == 1
    assert 0.3 <= taken["tools/wait/seconds"] < 2
    assert stats.take() == {}  # counted once, per logging step
    from grpo_core.training.callbacks import ToolStatsCallback

    episode.wait(0.0)
    logs = {"reward": 0.5}
    ToolStatsCallback(stats).on_log(None, None, None, logs=logs)
    assert logs["tools/wait/calls"] == 1 and logs["tools/wait/timeouts"] == 0  # into metrics.jsonl with the step


@pytest.mark.parametrize("source, expected", [
    ("class Calc:\n    def multiply(self, a: str) -> str:\n        return a\n", "has no reset(**row) method"),
    ("class Calc:\n    def __init__(self):\n        raise ValueError('no key set')\n    def reset(self, **row):\n"
     "        pass\n", "Calc() raised ValueError: no key set"),
    ("class Calc:\n    def __init__(self, key):\n        pass\n    def reset(self, **row):\n        pass\n",
     "every parameter of its __init__ needs a default"),
    ("calc = 3\n", "has no function 'Calc'"),
    ("class Calc:\n    def reset(self, **row):\n        pass\n    def multiply(self, a, b):\n        return a\n",
     "Calc.multiply cannot be shown to the model as a tool"),
    ('class Calc:\n    def reset(self, **row):\n        pass\n    def multiply(self, a: str) -> str:\n'
     '        """Multiply."""\n        return a\n', "Calc.multiply cannot be shown to the model as a tool"),
])
def test_a_broken_environment_class_is_exit_2_before_anything_loads(source, expected, problems, tmp_path):
    (tmp_path / "calc.py").write_text(source)
    out = tmp_path / "out"
    out.mkdir()
    refused(env_args(tmp_path / "calc.py", problems, out), expected, folder=out)


def test_an_unknown_environment_is_exit_2_listing_the_installed(problems, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    refused(["--env", "calculatr", *env_args("x", problems, out)[2:]], "unknown environment 'calculatr'", folder=out)


def test_several_environments_need_an_environment_column(calc_file, problems, tmp_path, cache_dir):
    second = tmp_path / "other.py"
    second.write_text(CALCULATOR)
    out = tmp_path / "out"
    out.mkdir()
    refused([*env_args(calc_file, problems, out), "--env", f"{second}:Calc"],
            "has no 'environment' column", folder=out)


def test_a_model_whose_template_cannot_call_tools_is_exit_2_naming_chat_template(calc_file, problems, tmp_path,
                                                                                 cache_dir):
    from grpo_core import resolve_model

    model = tmp_path / "model"
    shutil.copytree(resolve_model("tiny-random"), model)
    (model / "chat_template.jinja").write_text("{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n"
                                               "{% endfor %}")
    out = tmp_path / "out"
    out.mkdir()
    args = env_args(calc_file, problems, out)
    args[args.index("tiny-random")] = str(model)
    refused(args, ["cannot render tool calls", "--chat-template FILE"], folder=out)
    template = tmp_path / "tools.jinja"
    template.write_text("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    refused([*args, "--chat-template", str(template)], "cannot render a tool-calling conversation", folder=out)
    template.write_text("{{ messages }}{{ tools }}")  # renders the calls, in no format TRL can parse back
    refused([*args, "--chat-template", str(template)], "TRL knows no way to read tool calls back", folder=out)
    template.write_text(trl_contract.tool_template())
    code, output = invoke(*args, "--chat-template", str(template), "--dry-run")
    assert code == 0 and f'"chat_template": "--chat-template {template}"' in output, output


class AbacusPlugin:  # a name no installed plugin has (grpo-env-calculator registers calculator)
    @hookimpl
    def register_environments(self, register):
        register(EnvironmentSpec(name="abacus", description="exact arithmetic", factory="calc_module:Calc",
                                 params=(Param("places", 0, int, "decimal places"),), columns=("answer",)))


def test_a_registered_environment_is_listed_with_its_tools(calc_file, monkeypatch):
    monkeypatch.syspath_prepend(str(calc_file.parent))
    shutil.copy(calc_file, calc_file.parent / "calc_module.py")
    with registered(AbacusPlugin(), distribution="grpo-env-abacus"):
        result = CliRunner().invoke(cli, ["environments", "--json"])
        assert result.exit_code == 0, result.output
        (row,) = [r for r in json.loads(result.output) if r["name"] == "abacus"]
        assert row["tools"] == ["multiply"] and row["reward"] == [0.0, 1.0] and row["columns"] == ["answer"]
        assert row["distribution"] == "grpo-env-abacus"
        plugins = CliRunner().invoke(cli, ["plugins", "--json"])
        (info,) = [r for r in json.loads(plugins.output) if r["distribution"] == "grpo-env-abacus"]
        assert info["registers"] == {"environments": ["abacus"]}
        (environment,) = load_environments(["abacus"], {"abacus": {"places": "2"}})
        assert isinstance(environment, Environment) and environment.make().places == 2


PAYS_FOR_NOTHING = CALCULATOR.replace("return float(self.calls > 0)", "return 1.0")


def test_preflight_runs_the_environment_checks_and_stops_a_run_whose_episode_pays_for_nothing(problems, tmp_path,
                                                                                              cache_dir):
    (tmp_path / "calc.py").write_text(PAYS_FOR_NOTHING)
    out = tmp_path / "out"
    args = [a for a in env_args(tmp_path / "calc.py", problems, out) if a != "--no-preflight"]
    code, output = invoke(*args)
    assert code == 1, output
    assert "preflight checks failed" in output and "do-nothing" in output and "(no tool call)" in output
    assert not (out / "final").exists() and not (out / "metrics.jsonl").exists()


def test_preflight_passes_the_example_calculator_and_says_so(capsys, cache_dir):
    from grpo_core.settings.layers import settings_from_options
    from grpo_core.training.resolve import resolve
    from grpo_core.training.runner import preflight

    settings = settings_from_options(environments=("examples/environments/calculator.py:Calculator",),
                                     rewards=("math",), dataset="local",
                                     dataset_args=("path=examples/data/products.jsonl",), model="tiny-random")
    preflight(resolve(settings, log=lambda m: None))
    said = capsys.readouterr().err
    assert "preflight: math, calculator:Calculator: no property failed on 40 dataset rows" in said


@pytest.mark.slow
def test_a_run_with_an_environment_trains_and_logs_tools_and_the_episode_reward(calc_file, problems, tmp_path,
                                                                                cache_dir):
    out = tmp_path / "out"
    code, output = invoke(*env_args(calc_file, problems, out))
    assert code == 0, output
    assert "chat template: TRL's qwen2_5.jinja" in output
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in records if "step" in r]
    assert len(steps) == 2
    assert all("tools/call_frequency" in r and "tools/failure_frequency" in r for r in steps)
    assert all(0 <= r["health/tool_share"] <= 1 and "health/tool_turns_used_up" in r for r in steps)
    assert all("rewards/calc:Calc/mean" in r and "rewards/length/mean" in r for r in steps)
    assert not [k for r in steps for k in r if k.startswith("rewards/Calc")]  # TRL's own copy is not there
    assert (out / "final" / "chat_template.jinja").read_text() == trl_contract.tool_template()
    config = (out / "run_config.yaml").read_text()
    assert f"{calc_file}:Calc" in config and "calc:Calc=" not in config  # --env reproduces it, not a reward


@pytest.mark.slow
def test_a_run_with_an_environment_trains_its_control_and_compares_episodes(calc_file, problems, tmp_path, cache_dir):
    from grpo_core.training import control

    out = tmp_path / "out"
    code, output = invoke(*env_args(calc_file, problems, out, "--compare", "2", "--control", "shuffled",
                                    "--set", "max_completion_length=24"))
    assert code == 0, output
    folder = control.control_folder(out)
    assert (folder / "final" / "chat_template.jinja").read_text() == trl_contract.tool_template()
    assert any("health/tool_share" in json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines())
    header = next(line for line in output.splitlines() if line.startswith("model "))
    assert header.split()[1:] == ["length", "calc:Calc", "tool-use"]  # the episode's reward is scored too
    assert f"{folder / 'final'} (control)" in output
    assert any(line.startswith("length, 2 rows:  base ") and "gain over control" in line
               for line in output.splitlines())


@pytest.mark.slow
def test_a_run_with_an_environment_interrupted_resumes_with_its_episodes(calc_file, problems, tmp_path, cache_dir):
    import os
    import signal
    import subprocess
    import sys
    import time

    out, steps = tmp_path / "out", 30

    def logged():
        path = out / "metrics.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    args = env_args(calc_file, problems, out, "--set", "max_completion_length=8", "--set", "save_steps=100")
    args[args.index("--max-steps") + 1] = str(steps)
    process = subprocess.Popen([sys.executable, "-m", "grpo_core", *args], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while len([r for r in logged() if "step" in r]) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert process.poll() is None, process.communicate()[1][-3000:]
    os.kill(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-3000:]
    (checkpoint,) = out.glob("checkpoint-*")
    resumed = subprocess.run([sys.executable, "-m", "grpo_core", "--config", str(out / "run_config.yaml"), "--resume",
                              "--no-preflight"], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming from {checkpoint}" in resumed.stderr
    records = [r for r in logged() if "step" in r and "reward" in r]
    assert [r["step"] for r in records] == list(range(1, steps + 1))
    assert all("rewards/calc:Calc/mean" in r and "health/tool_share" in r for r in records)  # the same episodes
    assert (out / "final" / "chat_template.jinja").read_text() == trl_contract.tool_template()
