"""Batched generation from token-id prompts, with the head they share computed once: what held-out scoring and
episodes outside training generate with."""

from __future__ import annotations

import inspect


def common_prefix_length(sequences: list[list[int]]) -> int:
    """How many leading tokens every sequence shares, leaving at least one token of each to feed."""
    shortest = min(len(ids) for ids in sequences)
    length = 0
    while length < shortest - 1 and all(ids[length] == sequences[0][length] for ids in sequences):
        length += 1
    return length


def sampling_args(temperature: float = 0.0, top_k: int = 0) -> dict:
    """``generate``'s arguments for greedy decoding (temperature 0), or for sampling at ``temperature`` from the
    ``top_k`` likeliest tokens (0: from all of them, as TRL samples by default). The model's own generation defaults
    (transformers' top_k of 50) never apply: what is sampled from is what is asked."""
    if temperature <= 0:
        return {"do_sample": False, "temperature": None, "top_k": None}
    return {"do_sample": True, "temperature": temperature, "top_k": top_k or None}


def generate_shared_prefix(model, tokenizer, encoded: list[list[int]], max_new_tokens: int,
                           temperature: float = 0.0, top_k: int = 0) -> list[str]:
    """Generate for token-id prompts, computing the tokens they all start with once.

    Held-out prompts share a long head (system prompt, worked examples), so the shared part is run
    once and its cache copied to every row; each row's own tail is left-padded after it. The tokens
    fed are exactly the prompt's, so the completions are those of a plain padded ``generate``.
    """
    output, width = generate_ids(model, tokenizer.pad_token_id, encoded, max_new_tokens=max_new_tokens,
                                 **sampling_args(temperature, top_k))
    return tokenizer.batch_decode(output[:, width:], skip_special_tokens=True)


def generate_ids(model, pad: int, encoded: list[list[int]], **generate_args):
    """``model.generate`` on the prompts with their shared head run once: (its output, the prompt width)."""
    import torch
    from transformers import DynamicCache

    shared = common_prefix_length(encoded) if len(encoded) > 1 else 0
    tails = [ids[shared:] for ids in encoded]
    width = max(len(tail) for tail in tails)
    input_ids = torch.tensor([encoded[0][:shared] + [pad] * (width - len(t)) + t for t in tails])
    attention = torch.tensor([[1] * shared + [0] * (width - len(t)) + [1] * len(t) for t in tails])
    if shared:
        cache = DynamicCache(config=model.config)
        name = cache_argument(model)
        model(input_ids=input_ids[:1, :shared], use_cache=True, **{name: cache})
        cache.batch_repeat_interleave(len(encoded))
        generate_args[name] = cache
    output = model.generate(input_ids=input_ids, attention_mask=attention, pad_token_id=pad,
                            **{"top_p": None, "top_k": None, **generate_args})
    return output, input_ids.shape[1]


def cache_argument(model) -> str:
    """The name ``model``'s forward and ``generate`` take an attention cache by: newer transformers name it
    ``cache`` and warn on the old name; older ones know only ``past_key_values``."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
