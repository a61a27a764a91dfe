"""Curricula: the level rises with the rolling accuracy, rows follow the level, the level survives a resume."""

from types import SimpleNamespace

from grpo_reasoning_gym.curriculum import Curriculum, callback, curriculum_of, observe
from grpo_reasoning_gym.dataset import load
from grpo_reasoning_gym.entries import load_entry


def test_the_level_rises_only_when_the_window_is_above_the_threshold():
    curriculum = Curriculum(["chain_sum"], threshold=0.75, window=4)
    for score in (1, 1, 0, 0):
        assert not curriculum.record("chain_sum", score)
    assert curriculum.levels["chain_sum"] == 0
    raised = [curriculum.record("chain_sum", 1.0) for _ in range(3)]
    assert raised == [False, False, True]  # the window reads 0, 1, 1, 1: 0.75
    assert curriculum.levels["chain_sum"] == 1


def test_rows_are_made_again_at_the_new_level_and_the_callback_logs_and_restores_it():
    dataset = load(tasks="chain_sum", size=8, curriculum=True, threshold=0.5, window=2)
    curriculum = curriculum_of(dataset)
    easy = [load_entry(row["entry"])["metadata"]["num_terms"] for row in dataset]
    observe({"task": ["chain_sum"] * 2}, [1.0, 1.0], {})
    assert curriculum.levels["chain_sum"] == 1
    hard = [load_entry(row["entry"])["metadata"]["num_terms"] for row in dataset]
    assert hard != easy and max(hard) > max(easy)
    assert dataset[0]["answer"] == load_entry(dataset[0]["entry"])["answer"]

    hook = callback(dataset)
    logs = {}
    hook.on_log(None, None, None, logs=logs)
    assert logs == {"curriculum/chain_sum/level": 1.0}
    saved = {type(hook).__name__: hook.state()}
    curriculum.levels["chain_sum"] = 0  # a fresh process starts at 0
    hook.on_train_begin(None, SimpleNamespace(stateful_callbacks=saved), None)
    assert curriculum.levels["chain_sum"] == 1


def test_no_curriculum_no_callback():
    assert callback(load(tasks="chain_sum", size=2)) is None
