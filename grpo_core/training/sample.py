"""Generate on held-out prompts and score with the selected rewards, to compare models before and after."""

from __future__ import annotations

import inspect
import math


def held_out(dataset, n: int):
    """The last ``n`` rows: training reads a dataset from the start, so these are the least seen."""
    n = min(n, len(dataset))
    return dataset.select(range(len(dataset) - n, len(dataset)))


def question_text(prompt) -> str:
    """What a row asks: a plain prompt, or the last user turn of a chat (few-shot turns come before it)."""
    if isinstance(prompt, str):
        return prompt
    users = [m.get("content", "") for m in prompt if m.get("role") == "user"]
    return users[-1] if users else ""


def has_held_out_split(spec, params: dict) -> bool:
    """Whether the dataset offers a ``test`` split apart from the one the run trains on."""
    split = next((p for p in spec.params if p.name == "split"), None)
    return split is not None and "test" in (split.choices or ()) and params.get("split") != "test"


def comparison_heading(spec, params: dict) -> str:
    """How a comparison after training starts: held out, or (no test split) on rows training also saw."""
    return "held-out comparison, greedy, on " if has_held_out_split(spec, params) else "comparison, greedy, on "


def held_out_rows(spec, params: dict, train_dataset, n: int):
    """Up to ``n`` distinct questions the run never trains on, and a few words on where they come from.

    A dataset whose ``split`` parameter offers ``test`` gives them from that split, less any question also in
    the training rows; one without gives its last rows, which training also sees, and says so.
    """
    if not has_held_out_split(spec, params):
        return held_out(train_dataset, n), (f"the dataset's last {min(n, len(train_dataset))} rows, which training also saw "
                                           "(it has no test split: not a held-out measure)")
    test = spec.load(**{**params, "split": "test"})
    trained = {question_text(p) for p in train_dataset["prompt"]}
    keep, seen = [], set()
    for index, prompt in enumerate(test["prompt"]):
        question = question_text(prompt)
        if question not in trained and question not in seen:
            seen.add(question)
            keep.append(index)
        if len(keep) == n:
            break
    return test.select(keep), f"{len(keep)} distinct test-split questions, none of them in the training rows"


def sample_and_score(model_path: str, rows, rewards, max_new_tokens: int = 64, batch_size: int = 64,
                     temperature: float = 0.0, seed: int = 0) -> dict:
    """Generate one completion per row and return per-reward means plus the samples."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32).eval()
    return {"model": model_path, **generate_and_score(model, tokenizer, rows, rewards, max_new_tokens, batch_size,
                                                      temperature)}


def generate_and_score(model, tokenizer, rows, rewards, max_new_tokens: int = 64, batch_size: int = 64,
                       temperature: float = 0.0) -> dict:
    """One completion per row from a loaded ``model`` (in eval mode), scored by ``rewards``: ``n``, the per-reward
    ``means`` and the ``samples``."""
    import torch

    padding_side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    prompts = list(rows["prompt"])
    completions: list[str] = []
    for start in range(0, len(prompts), batch_size):
        batch = prompts[start:start + batch_size]
        texts = [
            tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True) if not isinstance(p, str) else p
            for p in batch
        ]
        encoded = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
        with torch.inference_mode():
            completions += generate_shared_prefix(model, tokenizer, encoded, max_new_tokens, temperature)
    tokenizer.padding_side = padding_side
    shaped = [[{"role": "assistant", "content": c}] if not isinstance(p, str) else c for p, c in zip(prompts, completions)]
    columns = {name: list(rows[name]) for name in rows.column_names if name != "prompt"}
    scores = {}
    for reward in rewards:
        values = reward.score(prompts=prompts, completions=shaped, completion_ids=None, **columns)
        finite = [v for v in values if v is not None and math.isfinite(v)]
        scores[reward.__name__] = {"mean": sum(finite) / len(finite) if finite else None, "scored": len(finite),
                                   "values": values}
    return {"n": len(prompts), "means": {k: v["mean"] for k, v in scores.items()},
            "samples": [{"prompt": p, "completion": c, **{k: v["values"][i] for k, v in scores.items()}}
                        for i, (p, c) in enumerate(zip(prompts, completions))]}


def common_prefix_length(sequences: list[list[int]]) -> int:
    """How many leading tokens every sequence shares, leaving at least one token of each to feed."""
    shortest = min(len(ids) for ids in sequences)
    length = 0
    while length < shortest - 1 and all(ids[length] == sequences[0][length] for ids in sequences):
        length += 1
    return length


def generate_shared_prefix(model, tokenizer, encoded: list[list[int]], max_new_tokens: int,
                           temperature: float = 0.0) -> list[str]:
    """Generate for token-id prompts, computing the tokens they all start with once.

    Held-out prompts share a long head (system prompt, worked examples), so the shared part is run
    once and its cache copied to every row; each row's own tail is left-padded after it. The tokens
    fed are exactly the prompt's, so the completions are those of a plain padded ``generate``.
    """
    output, width = generate_ids(model, tokenizer.pad_token_id, encoded, max_new_tokens=max_new_tokens,
                                 do_sample=temperature > 0, temperature=temperature if temperature > 0 else None)
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
        # newer transformers name it `cache` and warn on the old name; older ones know only past_key_values
        name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        model(input_ids=input_ids[:1, :shared], use_cache=True, **{name: cache})
        cache.batch_repeat_interleave(len(encoded))
        generate_args[name] = cache
    output = model.generate(input_ids=input_ids, attention_mask=attention, top_p=None, top_k=None,
                            pad_token_id=pad, **generate_args)
    return output, input_ids.shape[1]


def score_models(models: list[tuple[str, str]], rows, rewards, max_new_tokens: int = 64,
                 temperature: float = 0.0) -> list[dict]:
    """``sample_and_score`` for each ``(label, path)``, on the same rows; each result names its label."""
    results = []
    for label, path in models:
        result = sample_and_score(path, rows, rewards, max_new_tokens, temperature=temperature)
        result["model"] = label
        results.append(result)
    return results


def format_comparison(results: list[dict]) -> str:
    names = list(results[0]["means"])
    width = max(12, *(len(r["model"]) for r in results)) if results else 12
    lines = [f"{'model':<{width}}  " + "".join(f"{n:>14}" for n in names)]
    for result in results:
        cells = "".join(f"{'-' if result['means'][n] is None else format(result['means'][n], '.3f'):>14}" for n in names)
        lines.append(f"{result['model']:<{width}}  {cells}")
    if len(results) == 2:  # before and after: the change is what a reader looks for
        before, after = (r["means"] for r in results)
        changes = ["-" if before[n] is None or after[n] is None else format(after[n] - before[n], "+.3f")
                   for n in names]
        cells = "".join(f"{change:>14}" for change in changes)
        lines.append(f"{'change':<{width}}  {cells}")
    return "\n".join(lines)
