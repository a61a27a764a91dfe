"""Rewards written for TRL, used as they are: TRL calls a reward with keywords only (``prompts``, ``completions``,
``completion_ids``, ``trainer_state``, every dataset column), in any parameter order, with its completions in the
dataset's shape (message lists for a conversational prompt), and takes bools as numbers. Each such reward, and every
reward of ``trl.rewards``, is checked (a full report, no property left unchecked for lack of scores) and trains."""

import textwrap

import pytest

import grpo_core
from grpo_core.plugins.loading import validate_columns

from cli_helpers import invoke, invoke_json

SIGNATURES = textwrap.dedent('''
    import re


    def _right(completion, answer):
        text = completion[0]["content"] if isinstance(completion, list) else completion
        found = re.findall(r"<answer>(.*?)</answer>", text, re.S)
        try:  # the last answer tag, as a number: 22, 22.0 and +22 are one answer
            return len(found) > 0 and float(found[-1].strip()) == float(str(answer))
        except ValueError:
            return False


    def reads_kwargs(completions, **kwargs):
        """Reads its column from **kwargs, as TRL passes it."""
        return [float(_right(c, a)) for c, a in zip(completions, kwargs["answer"])]


    def prompts_first(prompts, completions, answer, **kwargs):
        """TRL passes every argument by keyword: the order is the author's."""
        assert len(prompts) == len(completions)
        return [float(_right(c, a)) for c, a in zip(completions, answer)]


    def booleans(completions, answer, **kwargs):
        """Bools, which TRL takes as numbers."""
        return [_right(c, a) for c, a in zip(completions, answer)]


    def reads_messages(completions, answer, **kwargs):
        """Reads completion[0]["content"], as TRL's own rewards do on a conversational dataset."""
        return [float(_right(c[0]["content"], a)) for c, a in zip(completions, answer)]


    def sees_what_trl_passes(completions, trainer_state, answer, **kwargs):
        """Fails loudly unless it gets what TRL gives a reward."""
        assert isinstance(completions[0], list) and completions[0][0]["role"] == "assistant"
        assert trainer_state is None or type(trainer_state).__name__ == "TrainerState"  # None in the checks
        return [float(_right(c, a)) for c, a in zip(completions, answer)]
''')
NAMES = ("reads_kwargs", "prompts_first", "booleans", "reads_messages")
TRL_REWARDS = {  # name -> reward arguments it needs on arithmetic
    "trl.rewards:think_format_reward": {},
    "trl.rewards:accuracy_reward": {"solution_column": "answer"},
    "trl.rewards:reasoning_accuracy_reward": {"solution_column": "answer"},
    # factories: their arguments, and the range of what they make, are reward arguments
    "trl.rewards:get_soft_overlong_punishment": {"max_completion_len": 512, "soft_punish_cache": 64,
                                                 "bounds": "-1,0"},
    "trl.rewards:get_repetition_penalty_reward": {"ngram_size": 2, "bounds": "-1,0"},
    "trl.rewards:get_cosine_scaled_reward": {"max_len": 512, "solution_column": "answer", "bounds": "-1,1"},
}
CHECKED = ("output", "bounds", "deterministic", "batch-independent", "shapes", "degenerate", "time")


@pytest.fixture
def signatures(tmp_path):
    path = tmp_path / "trl_rewards.py"
    path.write_text(SIGNATURES)
    return path


def check_report(reward: str, *options) -> dict:
    code, report = invoke_json("check", "--reward", reward, "--dataset", "arithmetic", "--max-examples", "5", "--seed", "0",
                          "--json", *options)
    assert code in (0, 1), report
    return {(r["reward"], r["property"]): r for r in report["results"]}


def test_rewards_in_trls_signatures_are_called_as_trl_calls_them(signatures):
    rows = grpo_core.load_dataset("arithmetic")
    rewards = grpo_core.load_rewards([f"{signatures}:{name}" for name in NAMES])
    validate_columns(rows, rewards, "arithmetic")  # fits each to the dataset, as training and check do
    answer = rows[0]["answer"]
    right, wrong = f"<answer>{answer}</answer>", "<answer>-1</answer>"
    for reward in rewards:  # TRL's call: keywords only, the dataset's shape and every column
        completions = [[{"role": "assistant", "content": text}] for text in (right, wrong)]
        scores = reward(prompts=[rows[0]["prompt"]] * 2, completions=completions, completion_ids=[[1], [2]],
                        answer=[answer] * 2, trainer_state=object(), log_metric=lambda *a: None)
        assert scores == [1.0, 0.0], reward
        assert all(type(score) is float for score in scores)
        # The checks give text: it reaches the reward in the dataset's shape too
        assert reward(completions=[right, wrong], answer=[answer] * 2)[0] == 1.0


@pytest.mark.parametrize("name", NAMES)
def test_a_reward_in_trls_signature_is_checked_on_every_property(signatures, name):
    report = check_report(f"{signatures}:{name}")
    assert not [key for key, r in report.items() if r["status"] == "fail"], report
    for prop in CHECKED:
        assert report[(f"trl_rewards:{name}", prop)]["status"] == "pass", (prop, report)


@pytest.mark.parametrize("name, args", TRL_REWARDS.items())
def test_trls_own_rewards_get_a_full_check_report(name, args):
    report = check_report(name, *reward_args(name, args))
    penalty_only = args.get("bounds", "0,1").endswith(",0")
    for prop in ("output", "bounds", "deterministic", "batch-independent", "shapes",
                 "penalty" if penalty_only else "degenerate"):
        result = report[(name, prop)]
        assert result["status"] == "pass", (prop, result)
        assert "None" not in result["message"] and "could be scored" not in result["message"]


def reward_args(name: str, args: dict) -> list[str]:
    return [arg for key, value in args.items() for arg in ("--reward-arg", f"{name}.{key}={value}")]


def test_a_factory_without_its_required_arguments_is_refused_naming_them():
    code, output = invoke("check", "--reward", "trl.rewards:get_soft_overlong_punishment", "--dataset", "arithmetic")
    assert code == 2 and "Traceback" not in output
    assert "max_completion_len, soft_punish_cache" in output and "--reward-arg" in output, output


def test_a_column_read_under_another_name_is_mapped_by_the_option_the_error_names():
    code, output = invoke("check", "--reward", "trl.rewards:accuracy_reward", "--dataset", "arithmetic")
    assert code == 2 and "Traceback" not in output
    suggested = output.split("read it from one of those with ", 1)[1].split(",", 1)[0].split()
    assert suggested == ["--reward-arg", "trl.rewards:accuracy_reward.solution_column=answer"], output
    assert "--dataset-arg" not in output  # arithmetic takes no columns= parameter: not suggested
    code, output = invoke("check", "--reward", "trl.rewards:accuracy_reward", *suggested, "--dataset", "arithmetic",
                          "--max-examples", "3", "--seed", "0")
    assert code in (0, 1) and "reward property checks" in output, output


@pytest.mark.slow
def test_trl_written_rewards_train_unchanged(signatures, tmp_path, cache_dir):
    """One tiny run with every kind: TRL's signatures, TRL's own rewards, a column mapped, preflight included."""
    rewards = [f"{signatures}:{name}" for name in (*NAMES, "sees_what_trl_passes")] + list(TRL_REWARDS)
    out = tmp_path / "out"
    code, output = invoke(*(arg for reward in rewards for arg in ("--reward", reward)),
                          *(arg for name, args in TRL_REWARDS.items() for arg in reward_args(name, args)),
                          "--dataset", "arithmetic", "--model", "tiny-random", "--max-steps", "1",
                          "--output-dir", out)
    assert code == 0, output
    assert "preflight" in output
    metrics = (out / "metrics.jsonl").read_text()
    for reward in rewards:
        assert f"rewards/{reward.rpartition('/')[2].replace('.py', '')}/mean" in metrics, reward
