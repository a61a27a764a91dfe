"""Every bad input is one line naming the value, with exit code 2, before anything is loaded."""

import json

import pytest
from click.testing import CliRunner

from grpo_core import Param, RewardSpec, hookimpl
from grpo_core.cli import cli
from grpo_core.plugins import registered

import reward_fixtures as fx


class Plugin:
    @hookimpl
    def register_rewards(self, register):
        register(RewardSpec("count-a", "Share of the letter a", fx.count_a, columns=("answer",),
                            params=(Param("answer_column", "answer", str), Param("strict", False, bool))))
        register(RewardSpec("tokens", "Token count", fx.token_count, bounds=(0, 1e9)))


@pytest.fixture(autouse=True)
def plugin():
    with registered(Plugin(), distribution="fixture-dist") as registry:
        yield registry


def run(*args):
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def train_args(data_file, *extra):
    return ["--reward", "count-a", "--dataset", "local", "--dataset-arg", f"path={data_file}",
            "--model", "tiny-random", "--dry-run", "--no-preflight", *extra]


def error_line(output):
    lines = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, output
    return lines[0]


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--reward", "count-b"], "unknown reward 'count-b' (did you mean 'count-a'?); installed: "),
        (["--reward", "count-a=heavy"], "weight 'heavy' for reward 'count-a' is not a number"),
        (["--reward", "count-a=-1"], "weight -1 for reward 'count-a' must be a finite number >= 0"),
        (["--reward", "count-a", "--reward-arg", "tokens.x=1"], "parameters given for reward 'tokens', which is not selected"),
        (["--reward", "count-a", "--reward-arg", "count-a.stric=1"], "reward 'count-a' has no parameter 'stric' (did you mean 'strict'?)"),
        (["--reward", "count-a", "--reward-arg", "count-a.strict=perhaps"], "parameter 'strict' of reward 'count-a' expects bool, got 'perhaps'"),
        (["--reward", "count-a", "--reward-arg", "strict=1"], "--reward-arg 'strict=1' is not of the form NAME.KEY=VALUE"),
        (["--reward", "count-a", "--dataset", "locl"], "unknown dataset 'locl' (did you mean 'local'?); installed: "),
        (["--reward", "count-a", "--dataset", "local", "--profile", "gpuu"], "unknown profile 'gpuu'"),
    ],
)
def test_bad_input_is_one_line_with_exit_code_2(args, expected):
    code, output = run(*args)
    assert code == 2, output
    assert expected in error_line(output)


def test_unknown_model(data_file):
    code, output = run("--reward", "count-a", "--dataset", "local", "--dataset-arg", f"path={data_file}",
                       "--model", "tiny-randm", "--dry-run")
    assert code == 2
    assert "unknown model 'tiny-randm' (did you mean 'tiny-random'?)" in error_line(output)


def test_missing_dataset_file():
    code, output = run("--reward", "count-a", "--dataset", "local", "--dataset-arg", "path=nope.jsonl", "--model", "tiny-random")
    assert code == 2 and "dataset file 'nope.jsonl' does not exist" in error_line(output)


def test_dataset_lacking_a_reward_column(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"prompt": "hi", "solution": "1"}\n')
    code, output = run("--reward", "count-a", "--dataset", "local", "--dataset-arg", f"path={path}", "--model", "tiny-random")
    assert code == 2
    line = error_line(output)
    assert "reward 'count-a' needs the column 'answer'" in line and "prompt, solution" in line
    assert "--reward-arg count-a.answer_column=solution" in line  # a column the dataset has, by name


def test_config_file_missing(data_file):
    code, output = run(*train_args(data_file, "--config", "absent.yaml"))
    assert code == 2 and "config file 'absent.yaml' does not exist" in error_line(output)


def test_config_file_invalid_yaml_names_the_line(data_file, tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("learning_rate: 1e-5\nrewards: [math\nmax_steps: 3\n")
    code, output = run(*train_args(data_file, "--config", str(config)))
    assert code == 2
    assert f"config file '{config}' is not valid YAML (line " in error_line(output)


def test_config_file_unknown_field(data_file, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("learning_rat: 1e-5\n")
    code, output = run(*train_args(data_file, "--config", str(config)))
    assert code == 2
    assert "'learning_rat' is not a GRPOConfig field (did you mean 'learning_rate'?)" in error_line(output)


@pytest.mark.parametrize("typo, meant", [("reward", "rewards"), ("rewardss", "rewards"), ("dataset_arg", "dataset_args"),
                                         ("learning", "learning_rate"), ("num_generation", "num_generations")])
def test_a_config_key_typo_suggests_the_key_it_starts_or_is_a_plural_of(data_file, tmp_path, typo, meant):
    config = tmp_path / "c.yaml"
    config.write_text(f"{typo}: 1\n")
    code, output = run(*train_args(data_file, "--config", str(config)))
    assert code == 2
    assert f"'{typo}' is not a GRPOConfig field (did you mean '{meant}'?)" in error_line(output)


def test_set_with_a_grpo_core_key_names_its_flag(data_file):
    code, output = run(*train_args(data_file, "--set", "compare=0"))
    assert code == 2
    assert "'compare' is a grpo-core key, not a GRPOConfig field; set it with its flag --compare" in error_line(output)
    assert "Traceback" not in output


def test_set_with_a_value_of_the_wrong_type(data_file):
    code, output = run(*train_args(data_file, "--set", "max_steps=many"))
    assert code == 2 and "'max_steps' expects int, got 'many'" in error_line(output)


def test_dry_run_merges_profile_file_and_flags(data_file, tmp_path, cache_dir, monkeypatch):
    monkeypatch.setattr("grpo_core.builtin.profiles.native_bf16_cpu", lambda: None)  # a CPU without bfloat16
    config = tmp_path / "run.yaml"
    config.write_text(
        "rewards: [count-a=2.0, tokens]\nreward_args: {count-a: {strict: true}}\n"
        "learning_rate: 1e-5\nmax_steps: 7\nnum_generations: 2\nper_device_train_batch_size: 2\n"
    )
    code, output = run(
        "--config", str(config), "--dataset", "local", "--dataset-arg", f"path={data_file}", "--model", "tiny-random",
        "--max-steps", "3", "--set", "beta=0.04", "--dry-run", "--no-preflight",
    )
    assert code == 0, output
    resolved = json.loads(output[output.index("{"):])
    grpo = resolved["grpo_config"]
    assert grpo["learning_rate"] == 1e-5  # file (YAML reads 1e-5 as text; coerced to float)
    assert grpo["max_steps"] == 3  # flag beats file
    assert grpo["beta"] == 0.04 and grpo["num_generations"] == 2
    assert grpo["reward_weights"] == [2.0, 1.0]
    assert grpo["use_cpu"] is True and grpo["bf16"] is False  # the auto profile picks cpu here
    assert resolved["profile"] == {"name": "cpu", "reason": "no CUDA device found"}
    assert resolved["rewards"][0]["params"] == {"answer_column": "answer", "strict": True}


def test_set_and_file_values_take_the_field_type(data_file, tmp_path, cache_dir):
    config = tmp_path / "run.yaml"
    config.write_text("save_strategy: no\nlogging_steps: 2\n")  # YAML reads `no` as False
    code, output = run(*train_args(data_file, "--config", str(config), "--set", "eval_strategy=no",
                                   "--set", "beta=0.04", "--set", "bf16=false"))
    assert code == 0, output
    grpo = json.loads(output[output.index("{"):])["grpo_config"]
    assert grpo["save_strategy"] == "no" and grpo["eval_strategy"] == "no"
    assert grpo["beta"] == 0.04 and grpo["bf16"] is False and grpo["logging_steps"] == 2


def test_listing_commands_as_json():
    code, output = run("rewards", "--json")
    assert code == 0
    rows = {row["name"]: row for row in json.loads(output)}
    assert rows["count-a"]["columns"] == ["answer"]
    assert rows["count-a"]["parameters"] == ["answer_column=answer", "strict=False"]
    assert rows["count-a"]["bounds"] == [0.0, 1.0]
    code, output = run("plugins", "--json")
    plugins = {row["distribution"]: row for row in json.loads(output)}
    assert plugins["fixture-dist"]["registers"] == {"rewards": ["count-a", "tokens"]}
    assert "local" in plugins["grpo-core"]["registers"]["datasets"]
    for kind in ("datasets", "profiles", "models"):
        code, output = run(kind, "--json")
        assert code == 0 and json.loads(output)


def test_listing_tables_show_names_and_parameters():
    code, output = run("rewards")
    assert code == 0
    assert "count-a" in output and "strict=False" in output
    code, output = run("plugins")
    assert code == 0 and "fixture-dist" in output


def dry_run_of(*args):
    code, output = run(*args)
    assert code == 0, output
    return json.loads(output[output.index("{"):])


def test_train_is_the_default_command(data_file):
    args = train_args(data_file)
    assert dry_run_of(*args)["rewards"] == dry_run_of("train", *args)["rewards"]
    assert dry_run_of(*args)["rewards"][0]["name"] == "count-a"


def test_train_help_shows_only_training_options():
    code, output = run("train", "--help")
    assert code == 0
    assert "--reward NAME[=WEIGHT]" in output and "--dry-run" in output and "--max-steps" in output
    assert "--json" not in output and "--max-examples" not in output
    assert "grpo-run train --help" not in output  # the help does not send the reader to itself
    code, output = run("--help")
    assert code == 0 and "--reward NAME" not in output and "train*" in output


@pytest.mark.parametrize("args", [
    ["--reward", "nosuch", "profiles"],
    ["--reward", "count-a", "check"],
    ["rewards", "--reward", "count-a"],
    ["profiles", "--dataset", "local"],
])
def test_an_option_given_to_a_command_that_does_not_use_it_is_an_error(args):
    code, output = run(*args)
    assert code == 2, output
    assert "Error:" in output


def test_check_takes_its_own_reward_option():
    result = CliRunner().invoke(cli, ["check", "--reward", "tokens", "--max-examples", "2", "--seed", "0", "--json"])
    names = {entry["reward"] for entry in json.loads(result.stdout)["results"]}
    assert names == {"tokens"}, result.output


def test_profiles_lists_and_shows_one():
    code, output = run("profiles", "--json")
    assert code == 0 and "cpu" in {row["name"] for row in json.loads(output)}
    result = CliRunner().invoke(cli, ["profiles", "show", "cpu"])
    assert result.exit_code == 0 and json.loads(result.stdout)["grpo_config"]["use_cpu"] is True
