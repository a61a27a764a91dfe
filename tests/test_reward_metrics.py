"""Training counts each reward's errors, timeouts and unscorable completions per step, batched rewards too."""

import json

import pytest

import reward_fixtures as fx
from grpo_core import Param, RewardSpec, hookimpl
from grpo_core.training.resolve import resolve

from cli_helpers import train_run
from grpo_core.settings.declared import RunSettings
from grpo_core.plugins import get_registry, registered

pytestmark = pytest.mark.slow


class Plugin:
    @hookimpl
    def register_rewards(self, register):
        register(RewardSpec("by-answer", "raises, hangs or gives None as the row says", fx.by_answer,
                            columns=("answer",), timeout=0.5, params=(Param("answer_column", "answer", str),)))


def _train(tmp_path, rewards, answers, reward_args=None):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"prompt": [{"role": "user", "content": f"Say {a}"}], "answer": a}) + "\n"
                            for a in answers))
    settings = RunSettings(
        rewards=rewards, reward_args=reward_args or {}, dataset="local", dataset_args={"path": str(data)},
        model="tiny-random",
        # Every row in every step: 4 rows, 4 prompts a step, 2 completions each.
        grpo={"max_steps": 2, "num_generations": 2, "per_device_train_batch_size": 8, "max_completion_length": 8,
              "output_dir": str(tmp_path / "out"), "save_strategy": "no", "logging_steps": 1},
    )
    run = resolve(settings, log=lambda message: None)
    trained = train_run(run, log=lambda message: None, progress=False).trainer
    records = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()]
    return trained, [r for r in records if "reward" in r]


def test_a_per_item_reward_s_errors_timeouts_and_unscorable_are_counted_per_step(tmp_path, cache_dir):
    with registered(Plugin()):
        trainer, steps = _train(tmp_path, ["by-answer"], ["raise", "hang", "none", "ok"])
    assert [r["step"] for r in steps] == [1, 2]
    for record in steps:  # each row's two completions, in each step
        assert record["rewards/by-answer/errors"] == 2.0
        assert record["rewards/by-answer/timeouts"] == 2.0
        assert record["rewards/by-answer/unscorable"] == 2.0
        assert record["rewards/by-answer/mean"] == 1.0
    logged = [e for e in trainer.state.log_history if "rewards/by-answer/errors" in e]  # TRL's own logs
    assert [e["rewards/by-answer/timeouts"] for e in logged] == [2.0, 2.0]


def test_the_math_reward_s_timeouts_and_unscorable_are_counted_per_step(tmp_path, cache_dir):
    if "math" not in get_registry().items["rewards"]:
        pytest.skip("the math plugin is not installed")
    # A gold answer math-verify cannot read within the limit (2.4 s), an empty one, and two plain ones.
    bomb = "\\frac{1}{" * 300 + "2" + "}" * 300
    _, steps = _train(tmp_path, ["math"], [bomb, "", "7", "12"],
                      reward_args={"math": {"timeout": 0.5}})
    assert [r["step"] for r in steps] == [1, 2]
    for record in steps:
        assert record["rewards/math/timeouts"] == 2.0
        assert record["rewards/math/unscorable"] == 2.0
        assert record["rewards/math/errors"] == 0.0


def test_the_math_reward_s_errors_are_counted():
    from grpo_core import load_rewards

    if "math" not in get_registry().items["rewards"]:
        pytest.skip("the math plugin is not installed")

    class Unprintable:
        def __str__(self):
            raise RuntimeError("cannot print me")

    (reward,) = load_rewards(["math"])
    logged = {}
    scores = reward.score(prompts=["p"] * 2, completions=["<answer>5</answer>"] * 2, answer=[Unprintable(), "5"],
                    log_metric=logged.__setitem__)
    assert scores == [None, 1.0]
    assert (logged["rewards/math/errors"], logged["rewards/math/unscorable"]) == (1.0, 0.0)
