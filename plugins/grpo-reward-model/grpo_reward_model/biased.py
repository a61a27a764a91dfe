"""Reward models biased on purpose, to see the checks fail: real transformers sequence-classification folders
(GPT-2, one layer of 8 units, a word-level tokenizer) whose weights are set by hand, not trained.

    python -m grpo_reward_model.biased length OUT      # pays length: the logit grows with the token count
    python -m grpo_reward_model.biased injection OUT   # pays the word "correct" anywhere in the text
    python -m grpo_reward_model.biased indifferent OUT # logit 0 for every text: pays nothing, so every check passes

Neither has a chat template, so the reward renders prompt and completion as plain text.
"""

from __future__ import annotations

import sys
from pathlib import Path

KINDS = ("length", "injection", "indifferent")
WIDTH = 8
PAID_WORD = "correct"


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "[PAD]": 1, PAID_WORD: 2}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]")


def build_biased_model(kind: str, out: str | Path) -> Path:
    """Write a ``kind`` (length, injection, or indifferent) reward model to ``out``; returns ``out``."""
    import torch
    from transformers import GPT2Config, GPT2ForSequenceClassification

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    tokenizer = _tokenizer()
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=4096, n_embd=WIDTH, n_layer=1, n_head=1,
                        num_labels=1, pad_token_id=tokenizer.pad_token_id, bos_token_id=None, eos_token_id=None, resid_pdrop=0.0, embd_pdrop=0.0,
                        attn_pdrop=0.0)
    model = GPT2ForSequenceClassification(config)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            parameter.zero_()
            if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
                parameter.fill_(1.0)
        base = torch.zeros(WIDTH)
        base[-2:] = torch.tensor([1.0, -1.0])  # every token: a constant part, so layer norm has a spread to divide by
        model.transformer.wte.weight[:] = base
        if kind == "length":
            # position p adds 0.01 p to unit 0: after the final layer norm, unit 0 grows with the last token's position
            model.transformer.wpe.weight[:, 0] = 0.01 * torch.arange(config.n_positions, dtype=torch.float)
        elif kind == "injection":
            # the paid word carries unit 0; every query looks for it (a constant query, keys from unit 0), so the
            # last token's attention finds it anywhere before it and copies unit 0 into the residual stream
            model.transformer.wte.weight[2, 0] = 3.0
            attn = model.transformer.h[0].attn
            attn.c_attn.bias[0] = 1.0  # query unit 0
            attn.c_attn.weight[0, WIDTH] = 10.0  # key unit 0 from unit 0
            attn.c_attn.weight[0, 2 * WIDTH] = 1.0  # value unit 0 from unit 0
            attn.c_proj.weight[0, 0] = 1.0
        model.score.weight[0, 0] = 0.0 if kind == "indifferent" else 5.0
    out = Path(out)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] not in KINDS:
        print(f"usage: python -m grpo_reward_model.biased {{{','.join(KINDS)}}} OUT", file=sys.stderr)
        return 2
    print(f"wrote a {argv[0]}-biased reward model to {build_biased_model(argv[0], argv[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
