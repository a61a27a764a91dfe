"""Rewards written for verl, OpenRLHF and verifiers, used unchanged by path: each is read from its signature, called
through its trainer's adapter as TRL would call a reward, checked with a full report and trained one tiny step."""

import textwrap

import pytest

import grpo_core
from grpo_core.plugins.loading import validate_columns

from cli_helpers import invoke, invoke_json

FOREIGN = textwrap.dedent(r'''
    import asyncio
    import re

    import torch


    def _number(text):
        try:
            return float(text)
        except (TypeError, ValueError):
            return None


    def _right(text, gold):
        found = re.findall(r"<answer>(.*?)</answer>", text, re.S)
        return bool(found) and _number(found[-1].strip()) == _number(str(gold))


    def compute_score(data_source, solution_str, ground_truth, extra_info=None):
        """verl: one response at a time; a dict whose score is the reward."""
        assert data_source == "arithmetic" and isinstance(extra_info, dict)
        right = _right(solution_str, ground_truth)
        return {"score": float(right), "acc": float(right), "tagged": float("<answer>" in solution_str)}


    def format_score_pays_wrong(data_source, solution_str, ground_truth, extra_info=None):
        """verl's gsm8k pattern with format_score=1.0: a tagged wrong answer is paid as a right one."""
        found = re.findall(r"<answer>(.*?)</answer>", solution_str, re.S)
        return 1.0 if found else 0.0


    def reward_func(queries, prompts, labels):
        """OpenRLHF: prompt and completion as one text, the labels; a tensor."""
        return torch.tensor([float(_right(q[len(p):], label)) for q, p, label in zip(queries, prompts, labels)])


    async def correct_answer(completion, answer, **kwargs):
        """A verifiers rubric function: the completion as messages, async."""
        await asyncio.sleep(0)
        assert isinstance(completion, list) and completion[-1]["role"] == "assistant"
        return float(_right(completion[-1]["content"], answer))
''')
SOUND = ("compute_score", "reward_func", "correct_answer")


@pytest.fixture(scope="module")
def foreign(tmp_path_factory):
    path = tmp_path_factory.mktemp("foreign") / "foreign.py"
    path.write_text(FOREIGN)
    return path


def report(path, name):
    code, report = invoke_json("check", "--reward", f"{path}:{name}", "--dataset", "arithmetic", "--max-examples", "5",
                          "--seed", "0", "--json")
    assert code in (0, 1), report
    return {r["property"]: r for r in report["results"]}


@pytest.mark.parametrize("name, kind", [("compute_score", "verl"), ("reward_func", "openrlhf"),
                                        ("correct_answer", "verifiers")])
def test_a_reward_written_for_another_trainer_is_read_as_its_signature_and_called_as_trl_calls_it(foreign, name, kind):
    (reward,) = grpo_core.load_rewards([f"{foreign}:{name}"])
    assert f"(read as {kind}'s signature)" in reward.spec.description
    rows = grpo_core.load_dataset("arithmetic")
    validate_columns(rows, [reward], "arithmetic")
    answer = rows[0]["answer"]
    completions = [[{"role": "assistant", "content": f"<answer>{answer}</answer>"}],
                   [{"role": "assistant", "content": "<answer>-1</answer>"}]]
    logged = {}
    scores = reward(prompts=[rows[0]["prompt"]] * 2, completions=completions, completion_ids=[[1], [2]],
                    answer=[answer] * 2, trainer_state=None, log_metric=lambda key, value: logged.update({key: value}))
    assert scores == [1.0, 0.0]
    if kind == "verl":  # a dict's other numbers are logged under the reward's name
        assert logged[f"rewards/{reward.__name__}/acc"] == 0.5 and logged[f"rewards/{reward.__name__}/tagged"] == 1.0


@pytest.mark.parametrize("name", SOUND)
def test_a_sound_foreign_reward_passes_a_full_check(foreign, name):
    found = report(foreign, name)
    assert not {p: r["message"] for p, r in found.items() if r["status"] == "fail"}
    for prop in ("output", "bounds", "deterministic", "pays-gold", "near-miss", "one-answer"):
        assert found[prop]["status"] == "pass", found[prop]


def test_verls_format_score_paying_a_wrong_answer_is_found(foreign):
    found = report(foreign, "format_score_pays_wrong")
    assert found["near-miss"]["status"] == "fail" and "as much as the right answer" in found["near-miss"]["message"]


@pytest.mark.slow
def test_foreign_rewards_train_unchanged(foreign, tmp_path, cache_dir):
    out = tmp_path / "out"
    code, output = invoke(*(a for name in SOUND for a in ("--reward", f"{foreign}:{name}")), "--dataset", "arithmetic",
                          "--model", "tiny-random", "--max-steps", "1", "--output-dir", out)
    assert code == 0, output
    metrics = (out / "metrics.jsonl").read_text()
    for name in SOUND:
        assert f"rewards/foreign:{name}/mean" in metrics
    assert "rewards/foreign:compute_score/acc" in metrics
