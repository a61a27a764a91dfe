"""How ``reward-model`` scores: prompt and completion rendered with the model's own chat template (plain text when
it has none), tokenized, scored in batches under ``torch.inference_mode``, and the logit mapped to the bounds."""

from __future__ import annotations

import math
import re

from grpo_core import completion_text

from grpo_reward_model.model import DTYPES, loaded, validate_model

NORMALIZE = ("sigmoid", "none")


def encodable(text) -> str:
    """``text`` as a tokenizer takes it: a string whose unpaired surrogates (which UTF-8 cannot hold) are replaced."""
    text = "" if text is None else str(text)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def as_messages(prompt) -> list[dict]:
    """A prompt as chat messages: a text as one user message, messages as they are, none as no message."""
    if prompt is None:
        return []
    if isinstance(prompt, str):
        return [{"role": "user", "content": encodable(prompt)}]
    return [{**m, "content": encodable(completion_text([m]))} for m in prompt if isinstance(m, dict)]


def encode(tokenizer, prompts: list, completions: list[str], max_length: int) -> list[list[int]]:
    """Each (prompt, completion) as token ids: the chat template's conversation, or prompt + completion as text,
    tokenized in one batched call."""
    if getattr(tokenizer, "chat_template", None):
        texts = [tokenizer.apply_chat_template(as_messages(p) + [{"role": "assistant", "content": c}], tokenize=False)
                 for p, c in zip(prompts, completions)]
        special = False  # the template writes them (what apply_chat_template(tokenize=True) does)
    else:
        texts = ["\n".join(m["content"] for m in as_messages(p)) + c for p, c in zip(prompts, completions)]
        special = True
    filled = [i for i, text in enumerate(texts) if text]
    ids: list[list[int]] = [[] for _ in texts]
    if filled:
        for i, row in zip(filled, tokenizer([texts[i] for i in filled], add_special_tokens=special)["input_ids"]):
            ids[i] = list(row)
    # nothing to read: one end-of-text token, so the model still gives its score of nothing
    stand_in = next(t for t in (tokenizer.eos_token_id, tokenizer.bos_token_id, tokenizer.pad_token_id, 0)
                    if t is not None)
    return [row[-max_length:] if row else [stand_in] for row in ids]  # the head reads the last token: keep the end


def spans(lengths: list[int], batch_size: int) -> list[tuple[int, int]]:
    """(start, end) of each batch of sequences of ``lengths``, longest first: at most ``batch_size`` each, and a new
    batch begun where a sequence is under half the batch's longest, so padding never doubles a batch's work."""
    found, start = [], 0
    for i, length in enumerate(lengths):
        if i > start and (i - start >= batch_size or 2 * length < lengths[start]):
            found.append((start, i))
            start = i
    return found + ([(start, len(lengths))] if lengths else [])


def logits(model, tokenizer, sequences: list[list[int]], batch_size: int) -> list[float]:
    """The model's one logit per sequence (given longest first), in batches of at most ``batch_size`` (``spans``),
    right-padded, under inference mode."""
    import torch

    out: list[float] = []
    device = model.device
    pad = tokenizer.pad_token_id
    with torch.inference_mode():
        for start, end in spans([len(s) for s in sequences], batch_size):
            batch = sequences[start:end]
            width = max(1, max(len(s) for s in batch))
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, seq in enumerate(batch):
                ids[row, :len(seq)] = torch.tensor(seq, dtype=torch.long)
                mask[row, :len(seq)] = 1
            result = model(input_ids=ids.to(device), attention_mask=mask.to(device))
            out += [float(v) for v in result.logits[:, 0].float().cpu()]
    return out


def to_bounds(logit: float, normalize: str, low: float, high: float) -> float | None:
    """``sigmoid``: the logit squashed into [0, 1]; ``none``: the logit itself, clipped to [low, high]."""
    if not math.isfinite(logit):
        return None
    if normalize == "sigmoid":
        return 1.0 / (1.0 + math.exp(-logit)) if logit >= 0 else math.exp(logit) / (1.0 + math.exp(logit))
    return min(max(logit, low), high)


def reward_model_score(completions, prompts=None, *, model="", batch_size=8, max_length=1024, dtype="float32",
                       device="auto", normalize="sigmoid", bounds="-10,10", timeout=120.0, **columns) -> list:
    """The reward model's score of each completion with its prompt: in [0, 1] with ``normalize=sigmoid``, the raw
    logit clipped to [low, high] with ``none``. The model loads once per process (``model.loaded``)."""
    network, tokenizer = loaded(model, dtype, device)
    low, high = parse_bounds(bounds)
    prompts = list(prompts) if prompts is not None else [None] * len(completions)
    sequences = encode(tokenizer, prompts, [encodable(completion_text(c)) for c in completions], max_length)
    # longest first, so each batch holds sequences of like length and pads little
    order = sorted(range(len(sequences)), key=lambda i: -len(sequences[i]))
    scored = logits(network, tokenizer, [sequences[i] for i in order], batch_size)
    results: list = [None] * len(sequences)
    for i, value in zip(order, scored):
        results[i] = to_bounds(value, normalize, low, high)
    return results


def parse_bounds(text: str) -> tuple[float, float]:
    """``"LOW,HIGH"`` as two finite numbers with LOW < HIGH; a ValueError naming the text otherwise."""
    try:
        low, high = (float(part) for part in str(text).split(","))
    except ValueError:
        raise ValueError(f"bounds must be LOW,HIGH, two numbers such as -10,10, got {text!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"bounds must be two finite numbers with LOW < HIGH, got {text!r}")
    return low, high


def bounds_for(params: dict) -> tuple[float, float]:
    """The bounds a bound reward declares: [0, 1] with sigmoid, the user's LOW,HIGH with none."""
    return (0.0, 1.0) if params["normalize"] == "sigmoid" else parse_bounds(params["bounds"])


def validate_params(params: dict) -> None:
    if params["normalize"] not in NORMALIZE:
        raise ValueError(f"normalize must be sigmoid or none, got {params['normalize']!r}")
    if params["dtype"] not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {params['dtype']!r}")
    if not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", params["device"]):
        raise ValueError(f"device must be auto, cpu, cuda, cuda:N or mps, got {params['device']!r}")
    parse_bounds(params["bounds"])
    validate_model(params["model"])
