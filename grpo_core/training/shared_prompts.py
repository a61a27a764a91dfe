"""Each distinct prompt of a training batch runs through the model once, and its completions continue from its cache.

GRPO trains on ``num_generations`` completions of every prompt. TRL's forward pass runs each completion's own copy of
its prompt through the model (and, off a GPU, its language-model head over every prompt position as well), and the
backward pass goes back through every copy. With a worked example in the prompt, the default run's prompt is three
times as long as its completions, so most of that work is the same prompt again. ``share_prompts`` makes a trainer
run the distinct prompts (but their last token) once, with the attention cache, and each completion from a copy of
its prompt's cache: the keys and values are the same tensors the full pass computes, and the gradient reaches them
through the copies, so the log-probabilities, entropies and gradients are those of TRL's pass to float rounding.

Generation shares the same way (``share_generation``): the distinct prompts are read once, and every completion is
sampled from a copy of its prompt's cache, as ``generate`` continues from any cache it is given.

The first batch is computed both ways and compared on a few rows: sharing stays on only where they agree. A batch
that cannot be shared takes TRL's own pass: images, a mixture-of-experts loss, several processes, a cache that is not
a plain key/value cache, no prompt repeated.
"""

from __future__ import annotations

from collections.abc import Callable

from grpo_core.checks.display import first_line
from grpo_core.training import trl_contract
from grpo_core.training.generation import cache_argument

# How far the shared and the full pass's log-probabilities may differ, in nats, in the first batch's comparison: on
# average over the completion tokens (or the vocabulary, for the next token), and at most. Measured on SmolLM2-135M:
# float32 agrees to 1e-5; bfloat16 autocast's rounding gives 0.05 on average and at most 0.16 to 0.21; a row given
# another row's prompt, or attending to its padding, is off by 0.45 to 0.8 on average and 2.7 to 3.8 at most.
AGREEMENT_NATS = 0.15
AGREEMENT_MAX_NATS = 1.0


def gap(mine, theirs, name: str) -> str:
    """Why ``mine`` (a flat tensor of log-probabilities or entropies) is too far from ``theirs``, or ''."""
    difference = (mine.float() - theirs.float()).abs()
    if difference.numel() == 0:
        return ""
    mean, most = float(difference.mean()), float(difference.max())
    if mean <= AGREEMENT_NATS and most <= AGREEMENT_MAX_NATS:
        return ""
    return (f"{name} differs from the full pass's by {mean:.3g} on average and {most:.3g} at most (allowed: "
            f"{AGREEMENT_NATS:g} and {AGREEMENT_MAX_NATS:g})")


def share_prompts(trainer, warn: Callable[[str], None], note: Callable[[str], None] | None = None) -> None:
    """Route ``trainer``'s per-token log-probabilities through the shared pass (``shared_logps``) where it applies,
    and its model's generation (``share_generation``); ``warn`` says once why sharing was turned off, if it is.
    Under gradient checkpointing the training pass is TRL's from the start, which ``note`` says (generation, run
    without gradients, still shares)."""
    full = trl_contract.per_token_logps(trainer)
    alone = trainer.accelerator.num_processes == 1
    state = {"on": alone and not checkpointing(trainer.args), "checked": False}
    if alone and not state["on"]:
        (note or warn)(CHECKPOINTING_NOTE)

    def per_token_logps(model, input_ids, attention_mask, logits_to_keep, batch_size=None, compute_entropy=False,
                        compute_aux_loss=False, **extra):
        if not state["on"] or compute_aux_loss or any(value is not None for value in extra.values()):
            return full(model, input_ids, attention_mask, logits_to_keep, batch_size=batch_size,
                        compute_entropy=compute_entropy, compute_aux_loss=compute_aux_loss, **extra)
        import torch

        size = batch_size or input_ids.size(0)
        logps, entropies = [], []
        for start in range(0, input_ids.size(0), size):
            ids, mask = input_ids[start:start + size], attention_mask[start:start + size]
            part = None
            if state["on"]:
                try:
                    few = [] if state["checked"] else few_rows(ids, mask, ids.size(1) - logits_to_keep - 1)
                    if few:  # the first batch with a prompt to share
                        state["checked"] = True
                        problem = disagreement(trainer, model, full, ids[few], mask[few], logits_to_keep)
                        if problem:
                            raise ValueError(problem)
                    part = shared_logps(trainer, model, ids, mask, logits_to_keep, compute_entropy)
                except Exception as error:  # noqa: BLE001 - any failure falls back to TRL's pass, said once
                    state["on"] = False
                    warn(turned_off(error, "completions no longer share their prompt's forward pass",
                                    "training goes on with TRL's own pass, which gives the same results more slowly"))
            if part is None:
                part = full(model, ids, mask, logits_to_keep, compute_entropy=compute_entropy)[:2]
            logps.append(part[0])
            entropies.append(part[1])
        return torch.cat(logps), torch.cat(entropies) if compute_entropy else None, None

    trl_contract.replace_per_token_logps(trainer, per_token_logps)
    if alone:
        share_generation(trainer.model, warn)


CHECKPOINTING_NOTE = ("completions do not share their prompt's forward pass in training: gradient checkpointing (on in "
                      "this run's profile) runs each layer again without the attention cache sharing continues from, "
                      "so training takes TRL's own pass (--set gradient_checkpointing=false shares it, with more "
                      "memory); generation still reads each prompt once")


def checkpointing(args) -> bool:
    """Whether ``args`` (TrainingArguments) turn on gradient checkpointing, under either of its names."""
    return bool(getattr(args, "activation_checkpointing", None) or getattr(args, "gradient_checkpointing", False))


def disagreement(trainer, model, full, input_ids, attention_mask, logits_to_keep: int) -> str:
    """Why the shared pass's log-probabilities and entropies of a batch (whose prompts repeat) are not the full
    pass's, or '': both computed without gradients and in evaluation mode (no dropout), so they differ by float
    rounding alone."""
    import torch

    training = model.training
    model.eval()
    try:
        with torch.no_grad():
            shared = shared_logps(trainer, model, input_ids, attention_mask, logits_to_keep, True)
            reference = full(model, input_ids, attention_mask, logits_to_keep, compute_entropy=True)
    finally:
        model.train(training)
    keep = attention_mask[:, -logits_to_keep:].bool()
    return (gap(shared[0][keep], reference[0][keep], "the completion tokens' log-probability")
            or gap(shared[1][keep], reference[1][keep], "the completion tokens' entropy"))


def turned_off(error: Exception, what: str, instead: str) -> str:
    """The one warning that sharing stopped: ``what`` stopped, the error that stopped it, what happens ``instead``."""
    return f"{what} ({type(error).__name__}: {first_line(error) or 'no message'}); {instead}"


def few_rows(input_ids, attention_mask, split: int) -> list[int]:
    """Two rows of each of the first two prompts that repeat in the first ``split`` columns (what the comparison
    of the two passes needs, at a fraction of a batch's cost); none when no prompt repeats."""
    found = distinct_prompts(input_ids, attention_mask, split)
    if found is None:
        return []
    inverse = found[1].tolist()
    repeated = [p for p in dict.fromkeys(inverse) if inverse.count(p) > 1][:2]
    return [i for p in repeated for i in [i for i, q in enumerate(inverse) if q == p][:2]]


def distinct_prompts(input_ids, attention_mask, split: int):
    """(the distinct rows of ids and mask in the first ``split`` columns, side by side; each row's index among
    them), or None when no row repeats or there is nothing to share."""
    import torch

    if split < 1:
        return None
    key = torch.cat([input_ids[:, :split], attention_mask[:, :split]], dim=1)
    distinct, inverse = torch.unique(key, dim=0, return_inverse=True)
    if distinct.size(0) == input_ids.size(0):
        return None
    return distinct, inverse


def prompt_cache(model, distinct, split: int, inverse, **extra):
    """The attention cache of the distinct prompts (``distinct``: ids then mask, ``split`` columns each), one copy
    per row as ``inverse`` says; a TypeError when the model's cache is not a plain key/value cache."""
    prefix = model(input_ids=distinct[:, :split], attention_mask=distinct[:, split:], use_cache=True, logits_to_keep=1,
                   **extra)
    cache = getattr(prefix, "cache", None) or getattr(prefix, "past_key_values", None)
    if not plain_cache(cache):
        raise TypeError(f"the model's cache is a {type(cache).__name__}, not a plain key/value cache")
    cache.batch_select_indices(inverse.to(distinct.device))  # each row's copy of its prompt's keys and values
    return cache


def shared_logps(trainer, model, input_ids, attention_mask, logits_to_keep: int, compute_entropy: bool):
    """(log-probabilities, entropies or None) of the last ``logits_to_keep`` tokens of each row, each distinct
    prompt run once; None when no prompt repeats. The prefix is every prompt token but the last: the last prompt
    token's output predicts the first completion token, so it runs with the completions."""
    split = input_ids.size(1) - logits_to_keep - 1
    found = distinct_prompts(input_ids, attention_mask, split)
    if found is None:
        return None
    with trainer.accelerator.autocast():
        cache = prompt_cache(model, found[0], split, found[1])
        suffix = input_ids[:, split:]
        labels = suffix.masked_fill(attention_mask[:, split:] == 0, -100)
        labels[:, :-logits_to_keep] = -100
        outputs = model(input_ids=suffix, attention_mask=attention_mask, labels=labels, fused_lm_head=True,
                        **{cache_argument(model): cache})
    entropy = outputs.entropy[:, -logits_to_keep:] if compute_entropy else None
    return outputs.log_probs[:, -logits_to_keep:], entropy


def share_generation(model, warn: Callable[[str], None]) -> None:
    """Make ``model.generate`` read each distinct prompt of a batch once and sample every row from a copy of its
    prompt's cache; any other call (a cache given, other inputs, no prompt repeated) is ``generate``'s own. The
    first shared call compares the next-token log-probabilities both ways; ``warn`` says once why sharing was
    turned off, if it is."""
    original = model.generate
    state = {"on": True, "checked": False}

    def generate(*args, **kwargs):
        import torch

        ids, mask = kwargs.get("input_ids"), kwargs.get("attention_mask")
        config = kwargs.get("generation_config")
        # another input, a cache of its own, or rows that generate itself multiplies: generate's own reading
        others = [k for k, v in kwargs.items() if k not in ("input_ids", "attention_mask")
                  and (isinstance(v, torch.Tensor) or k in ("cache", "past_key_values"))]
        several = max(kwargs.get("num_return_sequences") or 1, kwargs.get("num_beams") or 1,
                      getattr(config, "num_return_sequences", 1) or 1, getattr(config, "num_beams", 1) or 1) > 1
        if not state["on"] or args or others or several or ids is None or mask is None or ids.dim() != 2:
            return original(*args, **kwargs)

        split = ids.size(1) - 1
        try:
            with torch.no_grad():
                found = distinct_prompts(ids, mask, split)
                if found is None:
                    return original(*args, **kwargs)
                if not state["checked"]:
                    state["checked"] = True
                    problem = next_token_disagreement(model, found[0], split)
                    if problem:
                        raise ValueError(problem)
                cache = prompt_cache(model, found[0], split, found[1], **positions(model, found[0][:, split:]))
        except Exception as error:  # noqa: BLE001 - any failure falls back to generate's own reading, said once
            state["on"] = False
            warn(turned_off(error, "generation no longer shares each prompt's reading",
                            "it goes on reading every copy"))
            return original(*args, **kwargs)
        return original(*args, **kwargs, **{cache_argument(model): cache})

    model.generate = generate


def positions(model, mask) -> dict:
    """``position_ids`` as ``generate`` numbers a left-padded prompt (from its mask), where the model takes them."""
    import inspect

    if "position_ids" not in inspect.signature(model.forward).parameters:
        return {}
    return {"position_ids": (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)}


def next_token_disagreement(model, distinct, split: int) -> str:
    """Why the next-token log-probabilities after each distinct prompt differ between a whole reading and a
    cached one (the prompt but its last token, then that token), or ''."""
    import torch

    if split < 2:
        return ""
    whole_ids, mask = distinct[:, :split], distinct[:, split:]
    at = positions(model, mask)
    whole = model(input_ids=whole_ids, attention_mask=mask, logits_to_keep=1, **at).logits[:, -1]
    head = distinct[:, :split - 1]
    rows = torch.arange(distinct.size(0))
    cache = prompt_cache(model, torch.cat([head, mask[:, :split - 1]], dim=1), split - 1, rows,
                         **{k: v[:, :split - 1] for k, v in at.items()})
    cached = model(input_ids=whole_ids[:, -1:], attention_mask=mask, logits_to_keep=1,
                   **{cache_argument(model): cache}, **{k: v[:, -1:] for k, v in at.items()}).logits[:, -1]
    return gap(cached.float().log_softmax(-1).flatten(), whole.float().log_softmax(-1).flatten(),
               "the next token's log-probability")


def plain_cache(cache) -> bool:
    """Whether ``cache`` is a transformers DynamicCache of full-attention layers only (what copying rows of keys and
    values is right for)."""
    try:
        from transformers.cache_utils import DynamicCache, DynamicLayer
    except ImportError:
        return False
    layers = getattr(cache, "layers", None)
    return type(cache) is DynamicCache and bool(layers) and all(type(layer) is DynamicLayer for layer in layers)
