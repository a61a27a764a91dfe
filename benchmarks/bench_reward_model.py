"""Scoring throughput of the reward-model reward against TRL's own reward-model path, measured in the same run.

    python benchmarks/bench_reward_model.py [--quick] [--model FOLDER] [--completions 256] [--repeats 3]

TRL's path is what GRPOTrainer does with a reward function that is a model (``_calculate_rewards``): each prompt and
completion rendered with TRL's ``apply_chat_template``, the batch tokenized at once, padded on the right, and one
forward pass under ``torch.inference_mode``. Both score the same arithmetic prompts and completions (right, wrong
and padded answers) with the same model, in calls of 1, 8 and 32 completions; each figure is the best of
``--repeats`` passes over all completions, in completions per second, with the ratio of the two.
Without ``--model`` it times an untrained model of the small one's shape (the weights do not change the time).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def completions_for(n: int) -> tuple[list, list]:
    prompts, completions = [], []
    for i in range(n):
        a, b = 3 + i % 17, 1 + (i * 7) % 13
        prompts.append([{"role": "user", "content": f"What is {a} + {b}?"}])
        answer = a + b + (i % 3 == 1)
        text = [f"<answer>{answer}</answer>", f"{a} + {b} = {answer}\n<answer>{answer}</answer>",
                f"Let me add {a} and {b} step by step. " * (1 + i % 4) + f"The answer is {answer}."][i % 3]
        completions.append([{"role": "assistant", "content": text}])
    return prompts, completions


def trl_path(model, tokenizer, prompts, completions) -> list[float]:
    """GRPOTrainer's scoring of a model reward (trl/trainer/grpo_trainer.py, _calculate_rewards), for one batch."""
    import torch
    from trl.data_utils import apply_chat_template

    texts = [apply_chat_template({"messages": p + c}, tokenizer)["text"] for p, c in zip(prompts, completions)]
    inputs = tokenizer(text=texts, return_tensors="pt", padding=True, padding_side="right", add_special_tokens=False)
    with torch.inference_mode():
        return model(**inputs).logits[:, 0].tolist()


def best_rates(scorers, prompts, completions, batch: int, repeats: int) -> list[float]:
    """Each scorer's best rate over ``repeats`` passes, the scorers taking turns so load on the machine hits both."""
    best = [float("inf")] * len(scorers)
    for _ in range(repeats):
        for k, score in enumerate(scorers):
            started = time.perf_counter()
            for start in range(0, len(prompts), batch):
                score(prompts[start:start + batch], completions[start:start + batch])
            best[k] = min(best[k], time.perf_counter() - started)
    return [len(prompts) / seconds for seconds in best]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 completions, one pass (a smoke run)")
    parser.add_argument("--model", default="", help="a reward model folder (default: the small model's shape)")
    parser.add_argument("--completions", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    n, repeats = (16, 1) if args.quick else (args.completions, args.repeats)

    import torch
    from transformers import AutoTokenizer

    from grpo_core import load_rewards, resolve_model
    from grpo_reward_model.model import loaded
    from grpo_reward_model.train import tiny_reward_model

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.model
        if not folder:
            tokenizer = AutoTokenizer.from_pretrained(resolve_model("tiny-random"))
            tiny_reward_model(tokenizer).save_pretrained(scratch)
            tokenizer.save_pretrained(scratch)
            folder = scratch
        prompts, completions = completions_for(n)
        model, tokenizer = loaded(folder, "float32", "cpu")
        print(f"model {args.model or 'untrained, the small model shape'}: {sum(p.numel() for p in model.parameters()):,} "
              f"parameters; {n} completions; torch threads {torch.get_num_threads()}; best of {repeats}")
        print(f"{'batch':>5} {'reward-model /s':>16} {'TRL path /s':>12} {'ratio':>6}")
        for batch in (1, 8, 32):
            [reward] = load_rewards(["reward-model"], {"reward-model": {"model": folder, "batch_size": batch,
                                                                        "device": "cpu"}})
            ours, theirs = best_rates([lambda p, c: reward.score(prompts=p, completions=c),
                                       lambda p, c: trl_path(model, tokenizer, p, c)],
                                      prompts, completions, batch, repeats)
            print(f"{batch:>5} {ours:>16.1f} {theirs:>12.1f} {ours / theirs:>6.2f}")


if __name__ == "__main__":
    main()
