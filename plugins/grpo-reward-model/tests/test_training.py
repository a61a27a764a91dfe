"""A policy trained with the reward-model reward, offline: two GRPO steps of the tiny-random model on arithmetic."""

import json

import pytest
import yaml
from click.testing import CliRunner

from grpo_core.testing import grpo_run

pytestmark = pytest.mark.slow


def test_two_steps_train_offline_with_the_reward_model(untrained_model, tmp_path):
    out = tmp_path / "out"
    config = tmp_path / "small.yaml"
    config.write_text(yaml.safe_dump({"num_generations": 2, "per_device_train_batch_size": 2,
                                      "max_completion_length": 8, "save_steps": 2}))
    result = CliRunner().invoke(grpo_run, [
        "--reward", "reward-model", "--reward-arg", f"reward-model.model={untrained_model}", "--dataset",
        "arithmetic", "--model", "tiny-random", "--max-steps", "2", "--output-dir", str(out), "--config",
        str(config), "--no-preflight"], catch_exceptions=False)  # an untrained model pays junk: preflight stops it
    assert result.exit_code == 0, result.output
    history = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    means = [row["rewards/reward-model/mean"] for row in history if "rewards/reward-model/mean" in row]
    assert len(means) == 2 and all(0.0 <= m <= 1.0 for m in means)
    assert all(row.get("rewards/reward-model/errors", 0.0) == 0.0 for row in history)
    assert (out / "final" / "config.json").exists()


def test_scoring_a_batch_by_length_buckets_gives_the_padded_batchs_scores_and_gradients():
    """The trainer calls the model one length bucket at a time: the same scores and gradients as one right-padded
    call, so the training is RewardTrainer's, at the cost of the tokens the batch holds."""
    import torch
    from transformers import AutoTokenizer

    from grpo_core import resolve_model
    from grpo_reward_model.train import _ByLength, tiny_reward_model

    tokenizer = AutoTokenizer.from_pretrained(resolve_model("tiny-random"))
    texts = ["<answer>12</answer>", "7 + 5 = 12\n<answer>12</answer>", "b" * 300, " " * 40, "x" * 900, "", "12"]
    ids = [tokenizer(text).input_ids for text in texts]
    longest = max(map(len, ids))
    input_ids = torch.tensor([row + [tokenizer.pad_token_id] * (longest - len(row)) for row in ids])
    mask = torch.tensor([[1] * len(row) + [0] * (longest - len(row)) for row in ids])
    scores = {}
    for label, call in (("padded", None), ("by length", _ByLength)):
        model = tiny_reward_model(tokenizer, seed=3)
        forward = call(model) if call else model
        logits = forward(input_ids=input_ids, attention_mask=mask, use_cache=False).logits
        logits.square().sum().backward()
        scores[label] = (logits.detach(), [p.grad.clone() for p in model.parameters()])
    (padded, padded_grads), (bucketed, bucketed_grads) = scores["padded"], scores["by length"]
    assert bucketed.shape == padded.shape == (len(texts), 1)
    assert len({round(float(x), 3) for x in padded}) > 3  # the texts score differently
    assert torch.allclose(bucketed, padded, atol=1e-5)
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(bucketed_grads, padded_grads))
