"""The run settings come from one declaration: the options of train, sample and check, the config keys, RunSettings
and the docs table; plugin parameters are ``params``."""

import dataclasses

import pytest

from grpo_core import Param, RewardSpec, hookimpl, load_rewards
from grpo_core.cli import cli
from grpo_core.errors import UsageError
from grpo_core.plugins import registered
from grpo_core.settings import declared
from grpo_core.settings.layers import flag_layer

LEVEL = RewardSpec("level", "A constant", lambda completion, level=0: float(level), bounds=(0, 9),
                   params=(Param("level", 0, int),))


class Plugin:
    @hookimpl
    def register_rewards(self, register):
        register(LEVEL)


@pytest.fixture
def plugin():
    with registered(Plugin(), distribution="fixture-dist") as registry:
        yield registry


def test_run_settings_has_exactly_the_declared_fields_a_run_keeps():
    kept = [f.name for f in dataclasses.fields(declared.Settings)
            if f.metadata["kind"] in ("run", "invocation", "place", "derived")]
    assert [f.name for f in dataclasses.fields(declared.RunSettings)] == kept
    assert {"weights", "overwrite", "grpo", "base_grpo"} <= set(kept)  # once added by hand, now declared


def test_the_stages_key_is_declared_as_a_config_key_outside_run_settings():
    assert "stages" in declared.FILE_KEYS
    assert "stages" not in {f.name for f in dataclasses.fields(declared.RunSettings)}
    assert "| `stages` |" in declared.settings_table()


@pytest.mark.parametrize("name", ["rewards", "reward_args", "dataset", "dataset_args"])
def test_train_sample_and_check_take_the_shared_options_from_the_declaration(name):
    setting = declared.BY_NAME[name]
    for command in ("train", "sample", "check"):
        option = next(p for p in cli.get_command(None, command).params if p.name == name)
        assert (option.opts, option.metavar, option.multiple) == ([setting.flag], setting.metavar, setting.multiple), command


def test_reward_args_become_params_by_reward_with_the_value_untouched():
    layer = flag_layer(rewards=("math=2", "length"), reward_args=("math.rel_tol= 1e-3", "length.target=300"))
    assert layer == {"rewards": ["math", "length"], "weights": {"math": 2.0},
                     "reward_args": {"math": {"rel_tol": " 1e-3"}, "length": {"target": "300"}}}
    with pytest.raises(UsageError, match="--reward-arg 'rel_tol=1' is not of the form NAME.KEY=VALUE"):
        flag_layer(reward_args=("rel_tol=1",))


def test_load_rewards_takes_params(plugin, recwarn):
    (reward,) = load_rewards(["level"], params={"level": {"level": "3"}})
    assert reward.params == {"level": 3}
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def test_load_rewards_takes_params_only(plugin):
    with pytest.raises(TypeError, match="args"):
        load_rewards(["level"], args={"level": {"level": "4"}})