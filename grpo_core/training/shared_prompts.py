"""Each distinct prompt of a training batch runs through the model once, and its completions continue from its cache.

GRPO trains on ``num_generations`` completions of every prompt. TRL's forward pass runs each completion's own copy of
its prompt through the model (and, off a GPU, its language-model head over every prompt position as well), and the
backward pass goes back through every copy. With a worked example in the prompt, the default run's prompt is three
times as long as its completions, so most of that work is the same prompt again. ``share_prompts`` makes a trainer
run the distinct prompts (but their last token) once, with the attention cache, and each completion from a copy of
its prompt's cache: the keys and values are the same tensors the full pass computes, and the gradient reaches them
through the copies, so the log-probabilities, entropies and gradients are those of TRL's pass to float rounding.

The first batch is computed both ways and compared: sharing stays on only where they agree. A batch that cannot be
shared takes TRL's own pass: images, a mixture-of-experts loss, several processes, a cache that is not a plain
key/value cache, no prompt repeated.
"""

from __future__ import annotations

from collections.abc import Callable

from grpo_core.training import trl_contract

# The largest difference in any completion token's log-probability between the shared and the full pass that the
# first batch's comparison accepts: float32 agrees to about 1e-5, bfloat16 autocast to a few hundredths, and a
# shifted position or a lost mask is off by whole units.
AGREEMENT_NATS = 0.1


def share_prompts(trainer, warn: Callable[[str], None]) -> None:
    """Route ``trainer``'s per-token log-probabilities through the shared pass (``shared_logps``) where it applies;
    ``warn`` says once why sharing was turned off, if it is."""
    full = trl_contract.per_token_logps(trainer)
    state = {"on": trainer.accelerator.num_processes == 1, "checked": False}

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
                    if not state["checked"]:
                        state["checked"] = True
                        problem = disagreement(trainer, model, full, ids, mask, logits_to_keep)
                        if problem:
                            raise ValueError(problem)
                    part = shared_logps(trainer, model, ids, mask, logits_to_keep, compute_entropy)
                except Exception as error:  # noqa: BLE001 - any failure falls back to TRL's pass, said once
                    state["on"] = False
                    warn(f"completions no longer share their prompt's forward pass ({type(error).__name__}: "
                         f"{str(error).splitlines()[0] if str(error) else 'no message'}); training goes on with "
                         f"TRL's own pass, which gives the same results more slowly")
            if part is None:
                part = full(model, ids, mask, logits_to_keep, compute_entropy=compute_entropy)[:2]
            logps.append(part[0])
            entropies.append(part[1])
        return torch.cat(logps), torch.cat(entropies) if compute_entropy else None, None

    trl_contract.replace_per_token_logps(trainer, per_token_logps)


def disagreement(trainer, model, full, input_ids, attention_mask, logits_to_keep: int) -> str:
    """Why the shared pass's log-probabilities and entropies of a batch are not the full pass's, or '': both
    computed without gradients and in evaluation mode (no dropout), so they differ by float rounding alone."""
    import torch

    training = model.training
    model.eval()
    try:
        with torch.no_grad():
            shared = shared_logps(trainer, model, input_ids, attention_mask, logits_to_keep, True)
            if shared is None:
                return ""
            reference = full(model, input_ids, attention_mask, logits_to_keep, compute_entropy=True)
    finally:
        model.train(training)
    keep = attention_mask[:, -logits_to_keep:].bool()
    for name, mine, theirs in (("log-probability", shared[0], reference[0]), ("entropy", shared[1], reference[1])):
        gap = float((mine.float() - theirs.float()).abs()[keep].max()) if keep.any() else 0.0
        if not gap <= AGREEMENT_NATS:
            return f"a completion token's {name} differs from the full pass's by {gap:.3g}"
    return ""


def shared_logps(trainer, model, input_ids, attention_mask, logits_to_keep: int, compute_entropy: bool):
    """(log-probabilities, entropies or None) of the last ``logits_to_keep`` tokens of each row, each distinct
    prompt run once; None when no prompt repeats. The prefix is every prompt token but the last: the last prompt
    token's output predicts the first completion token, so it runs with the completions."""
    import torch

    split = input_ids.size(1) - logits_to_keep - 1
    if split < 1:
        return None
    key = torch.cat([input_ids[:, :split], attention_mask[:, :split]], dim=1)
    distinct, inverse = torch.unique(key, dim=0, return_inverse=True)
    if distinct.size(0) == input_ids.size(0):
        return None
    with trainer.accelerator.autocast():
        prefix = model(input_ids=distinct[:, :split], attention_mask=distinct[:, split:], use_cache=True,
                       logits_to_keep=1)
    cache = getattr(prefix, "cache", None) or getattr(prefix, "past_key_values", None)
    if not plain_cache(cache):
        raise TypeError(f"the model's cache is a {type(cache).__name__}, not a plain key/value cache")
    cache.batch_select_indices(inverse.to(input_ids.device))  # each row's copy of its prompt's keys and values
    suffix = input_ids[:, split:]
    labels = suffix.masked_fill(attention_mask[:, split:] == 0, -100)
    labels[:, :-logits_to_keep] = -100
    with trainer.accelerator.autocast():
        outputs = model(input_ids=suffix, attention_mask=attention_mask, cache=cache, labels=labels,
                        fused_lm_head=True)
    entropy = outputs.entropy[:, -logits_to_keep:] if compute_entropy else None
    return outputs.log_probs[:, -logits_to_keep:], entropy


def plain_cache(cache) -> bool:
    """Whether ``cache`` is a transformers DynamicCache of full-attention layers only (what copying rows of keys and
    values is right for)."""
    try:
        from transformers.cache_utils import DynamicCache, DynamicLayer
    except ImportError:
        return False
    layers = getattr(cache, "layers", None)
    return type(cache) is DynamicCache and bool(layers) and all(type(layer) is DynamicLayer for layer in layers)
