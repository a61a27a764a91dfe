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


# A verifiers rubric function written sync, `(completion, answer)`: its signature is grpo-core's own too, so it is read
# as that (the completion's text) unless its `.signature` says otherwise.
SYNC_VERIFIERS = textwrap.dedent(r'''
    import re


    def _right(text, gold):
        found = re.findall(r"<answer>(.*?)</answer>", text, re.S)
        try:
            return bool(found) and float(found[-1].strip()) == float(str(gold))
        except ValueError:
            return False


    def correct(completion, answer) -> float:
        """verifiers, written sync: the completion is the list of messages."""
        return float(_right(completion[-1]["content"], answer))


    def declared(completion, answer) -> float:
        return float(_right(completion[-1]["content"], answer))


    declared.signature = "verifiers"


    def misspelled(completion, answer):
        return 1.0


    misspelled.signature = "verifier"


    def nothing_verl_passes(text, answer):
        return 1.0


    nothing_verl_passes.signature = "verl"
''')


@pytest.fixture(scope="module")
def sync_verifiers(tmp_path_factory):
    path = tmp_path_factory.mktemp("sync") / "rubric.py"
    path.write_text(SYNC_VERIFIERS)
    return path


def test_the_signature_attribute_reads_a_sync_verifiers_function_as_verifiers(sync_verifiers):
    (reward,) = grpo_core.load_rewards([f"{sync_verifiers}:declared"])
    assert reward.spec.read_as == "verifiers rubric (declared)" and "(read as verifiers's signature)" in reward.spec.description
    assert reward.columns == {"answer": "answer"}  # the row's answer reaches it, though it takes no **kwargs
    completions = [[{"role": "assistant", "content": "<answer>42</answer>"}],
                   [{"role": "assistant", "content": "<answer>41</answer>"}], "<answer>42</answer>"]
    assert reward(prompts=["q"] * 3, completions=completions, answer=["42"] * 3) == [1.0, 0.0, 1.0]
    found = report(sync_verifiers, "declared")
    assert not {p: r["message"] for p, r in found.items() if r["status"] == "fail"}
    assert found["pays-gold"]["status"] == "pass", found["pays-gold"]


@pytest.mark.parametrize("name, says", [
    ("misspelled", "its .signature is 'verifier'; set it to one of 'grpo-core', 'trl', 'verl', 'openrlhf', 'verifiers'"),
    ("nothing_verl_passes", "its .signature is 'verl', but it takes no 'solution_str'"),
])
def test_a_signature_attribute_that_cannot_hold_is_a_usage_error(sync_verifiers, name, says):
    with pytest.raises(grpo_core.UsageError, match="rubric:" + name) as error:
        grpo_core.load_rewards([f"{sync_verifiers}:{name}"])
    assert says in str(error.value)


def test_a_verifiers_function_read_as_text_fails_naming_the_override(sync_verifiers):
    (reward,) = grpo_core.load_rewards([f"{sync_verifiers}:correct"])
    assert reward.spec.read_as == "grpo-core"
    hint = "if correct was written for verifiers (the completion a message list), set correct.signature = 'verifiers'"
    with pytest.raises(grpo_core.RewardError, match="string indices must be integers") as error:
        reward(prompts=["q"], completions=["<answer>42</answer>"], answer=["42"])
    assert hint in str(error.value)
    assert hint in report(sync_verifiers, "correct")["output"]["message"]  # grpo-run check says it too


def test_the_rewards_listing_shows_the_signature_each_was_read_as(foreign, sync_verifiers):
    names = [f"{foreign}:compute_score", f"{foreign}:reward_func", f"{foreign}:correct_answer",
             f"{sync_verifiers}:declared", f"{sync_verifiers}:correct", "math"]
    code, rows = invoke_json("rewards", *names, "--json")
    assert code == 0, rows
    assert {row["name"]: row["signature"] for row in rows} == {
        "foreign:compute_score": "verl compute_score", "foreign:reward_func": "OpenRLHF reward_func",
        "foreign:correct_answer": "verifiers rubric", "rubric:declared": "verifiers rubric (declared)",
        "rubric:correct": "grpo-core", "math": "RewardSpec"}
    code, table = invoke("rewards", f"{foreign}:reward_func")
    assert code == 0 and "signature" in table.splitlines()[0] and "OpenRLHF" in table
