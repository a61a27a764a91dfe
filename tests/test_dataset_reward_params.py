"""A dataset's default reward parameters (DatasetSpec.reward_params): under the user's own, checked by name."""

import json

import pytest
from click.testing import CliRunner

from grpo_core import DatasetSpec, Param, PluginError, RewardSpec, hookimpl, load_rewards
from grpo_core.plugins import registered


def _rows():
    from datasets import Dataset

    return Dataset.from_list([{"prompt": f"say {i}", "answer": str(i)} for i in range(4)])


def _validate(params):
    if params["mode"] is None:
        raise ValueError("mode must be set, e.g. mode=strict")


class Asking:
    @hookimpl
    def register_rewards(self, register):
        register(RewardSpec("moded", "1 if the completion is non-empty", lambda c, mode=None, level=1: float(bool(c)),
                            params=(Param("mode", None, str, "how to judge"), Param("level", 1, int, "a level")),
                            validate=_validate))
        register(RewardSpec("plain", "1 if the completion is non-empty", lambda c: float(bool(c))))

    @hookimpl
    def register_datasets(self, register):
        register(DatasetSpec("asks", "rows that ask moded for strict", _rows, reward_params={
            "moded": {"mode": "strict", "level": 2}, "not-installed": {"whatever": 1}}))
        register(DatasetSpec("asks-badly", "rows that ask moded for a parameter it lacks", _rows,
                             reward_params={"moded": {"mood": "strict"}}))
        register(DatasetSpec("asks-a-bad-value", "rows that ask moded for a level that is no int", _rows,
                             reward_params={"moded": {"level": "high"}}))


@pytest.fixture
def asking():
    with registered(Asking(), distribution="grpo-asking") as registry:
        yield registry


def _dry_run(*args):
    from grpo_core.cli import cli

    result = CliRunner().invoke(cli, [*args, "--model", "tiny-random", "--dry-run", "--no-preflight"])
    assert result.exit_code == 0, result.output
    described = json.loads(result.output[result.output.index("{"):])
    return {r["name"]: r["params"] for r in described["rewards"]}


def test_the_dataset_s_reward_params_reach_the_reward(asking):
    (reward,) = load_rewards(["moded"], dataset="asks")
    assert reward.params == {"mode": "strict", "level": 2}
    assert _dry_run("--dataset", "asks", "--reward", "moded")["moded"] == {"mode": "strict", "level": 2}


def test_the_user_s_reward_args_win_over_the_dataset_s(asking):
    (reward,) = load_rewards(["moded"], params={"moded": {"level": "5"}}, dataset="asks")
    assert reward.params == {"mode": "strict", "level": 5}
    params = _dry_run("--dataset", "asks", "--reward", "moded", "--reward-arg", "moded.mode=loose")
    assert params["moded"] == {"mode": "loose", "level": 2}


def test_only_rewards_in_the_run_take_the_dataset_s_params(asking):
    (reward,) = load_rewards(["plain"], dataset="asks")  # moded and not-installed are not in the run
    assert reward.params == {}
    with pytest.raises(Exception, match="mode must be set"):
        load_rewards(["moded"])  # without the dataset, nothing is asked


def test_a_parameter_the_reward_lacks_is_an_error_naming_the_dataset(asking):
    with pytest.raises(PluginError) as error:
        load_rewards(["moded"], params={"moded": {"mode": "x"}}, dataset="asks-badly")
    message = str(error.value)
    assert "dataset 'asks-badly'" in message and "'mood'" in message and "mode, level" in message
    with pytest.raises(PluginError, match="dataset 'asks-a-bad-value'.*expects int"):
        load_rewards(["moded"], dataset="asks-a-bad-value")


def test_check_and_sample_load_the_dataset_s_params(asking):
    from grpo_core.cli import cli
    from grpo_core.training.runner import sample_models

    result = CliRunner().invoke(cli, ["check", "--reward", "moded", "--dataset", "asks", "--max-examples", "2"])
    assert "mode must be set" not in result.output and result.exit_code in (0, 1), result.output
    result = CliRunner().invoke(cli, ["check", "--reward", "moded", "--dataset", "asks-badly"])
    assert result.exit_code != 0 and "dataset 'asks-badly'" in result.output
    with pytest.raises(PluginError, match="dataset 'asks-badly'"):
        sample_models(["tiny-random"], "asks-badly", (), ("moded",), ("moded.mode=x",), 1, 4, 1.0)


def test_reward_params_must_map_reward_names_to_dicts():
    with pytest.raises(TypeError, match="reward_params must map reward names"):
        DatasetSpec("bad", "bad", _rows, reward_params={"moded": "strict"})
