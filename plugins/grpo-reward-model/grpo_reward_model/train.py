"""Train a small reward model on right and wrong answers to a generated dataset's questions, with TRL's RewardTrainer.

    python -m grpo_reward_model.train OUT [--steps 200] [--size 6400] [--dataset arithmetic]

The model is a Llama with 2 layers of 64 units over grpo-core's ``tiny-random`` byte-level tokenizer and chat
template, trained from scratch (no hub), and saved as an ordinary transformers folder (``from_pretrained`` reads it;
``--reward-arg reward-model.model=OUT`` scores with it).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from grpo_core import GrpoError, load_dataset, resolve_model

from grpo_reward_model.pairs import preference_rows


def tiny_reward_model(tokenizer, seed: int = 0, hidden: int = 64, layers: int = 2):
    """A randomly initialised Llama sequence classifier with one output (the reward), sized for ``tokenizer``."""
    import torch
    from transformers import LlamaConfig, LlamaForSequenceClassification

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=1024, num_labels=1, pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    return LlamaForSequenceClassification(config)


class _ByLength:
    """The reward model called on a right-padded batch one length bucket at a time (lengths within a power of two
    of each other, each bucket cut to its longest sequence), its scores put back in the batch's order.

    Each score is the same function of the same tokens as in one padded call (a causal model reads no padding to the
    right of a sequence, and the score is read at its last token), so training takes the same steps on the same
    loss, up to rounding; on a CPU it costs the tokens the batch holds rather than its size times its longest
    sequence (a few long skipped completions among short answers: about 8 times fewer tokens through the layers)."""

    def __init__(self, model):
        self.model = model

    def __call__(self, input_ids, attention_mask, **kwargs):
        import torch
        from transformers.modeling_outputs import SequenceClassifierOutputWithPast

        lengths = attention_mask.sum(dim=1)
        buckets = torch.ceil(torch.log2(lengths.clamp(min=1).float())).long()
        logits = None
        for bucket in buckets.unique():
            rows = (buckets == bucket).nonzero().squeeze(1)
            longest = max(1, int(lengths[rows].max()))
            part = self.model(input_ids=input_ids[rows, :longest], attention_mask=attention_mask[rows, :longest],
                              use_cache=False).logits
            logits = part.new_zeros((input_ids.shape[0], part.shape[1])) if logits is None else logits
            logits = logits.index_put((rows,), part)
        return SequenceClassifierOutputWithPast(logits=logits)


def _trainer_by_length():
    """TRL's RewardTrainer, its model called through ``_ByLength``."""
    from trl import RewardTrainer

    class RewardTrainerByLength(RewardTrainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            return super().compute_loss(_ByLength(model), inputs, return_outputs, num_items_in_batch)

    return RewardTrainerByLength


def train_reward_model(out: str | Path, *, steps: int = 200, size: int = 6400, dataset: str = "arithmetic",
                       dataset_params: dict | None = None, seed: int = 0, batch_size: int = 32,
                       learning_rate: float = 2e-3, hidden: int = 64, layers: int = 2, log=print) -> Path:
    """Train the small reward model on ``size`` rows of ``dataset`` (a prompt and an integer answer) and save it to
    ``out``; returns ``out``. Each row gives one (chosen, rejected) pair (``pairs.preference_rows``)."""
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import RewardConfig

    torch.set_num_threads(max(1, torch.get_num_threads()))
    out = Path(out)
    # questions without worked examples: every prompt token costs training time on a CPU
    rows = load_dataset(dataset, {"size": size, "seed": seed, "few_shot": 0, "system_prompt": "",
                                  **(dataset_params or {})})
    pairs = Dataset.from_list(preference_rows(rows, seed=seed))
    tokenizer = AutoTokenizer.from_pretrained(resolve_model("tiny-random"))
    model = tiny_reward_model(tokenizer, seed=seed, hidden=hidden, layers=layers)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="reward-model-train-") as scratch:
        args = RewardConfig(output_dir=scratch, max_steps=steps, per_device_train_batch_size=batch_size,
                            learning_rate=learning_rate, lr_scheduler_type="cosine", warmup_steps=min(20, steps // 10),
                            logging_steps=max(1, steps // 10), save_strategy="no", report_to="none", seed=seed,
                            use_cpu=True, dataloader_num_workers=0, disable_tqdm=True,
                            max_length=1024,  # the longest skipped completions (runs of up to 960 characters) fit
                            # rewards centred on 0, so the sigmoid's middle, 0.5, sits between right and wrong
                            center_rewards_coefficient=0.01)
        trainer = _trainer_by_length()(model=model, args=args, train_dataset=pairs, processing_class=tokenizer)
        trainer.train()
    model = trainer.model.eval()
    model.config.use_cache = False
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    log(f"reward model trained in {time.monotonic() - started:.0f} s ({steps} steps of {batch_size} pairs) "
        f"and saved to {out}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grpo_reward_model.train", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the folder to save the reward model in")
    parser.add_argument("--steps", type=int, default=200, help="optimizer steps (default 200)")
    parser.add_argument("--size", type=int, default=6400, help="dataset rows, one pair each (default 6400)")
    parser.add_argument("--dataset", default="arithmetic", help="a dataset with prompt and integer answer columns")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("steps", "size"):
        if getattr(args, name) < 1:
            print(f"error: --{name} must be 1 or more, got {getattr(args, name)}", file=sys.stderr)
            return 2
    try:
        train_reward_model(args.out, steps=args.steps, size=args.size, dataset=args.dataset, seed=args.seed)
    except GrpoError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
