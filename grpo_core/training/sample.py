"""Generate on held-out prompts and score with the selected rewards, to compare models before and after."""

from __future__ import annotations

import math

from grpo_core.training.generation import generate_shared_prefix
from grpo_core.training.rollouts import run_episodes, tool_calls_made


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
                     temperature: float = 0.0, seed: int = 0, episodes=None, top_k: int = 0) -> dict:
    """Generate one completion per row (with ``episodes``, a ``rollouts.EpisodeSettings``: one episode with tools)
    and return per-reward means plus the samples."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32).eval()
    return {"model": model_path, **generate_and_score(model, tokenizer, rows, rewards, max_new_tokens, batch_size,
                                                      temperature, episodes, top_k)}


def generate_and_score(model, tokenizer, rows, rewards, max_new_tokens: int = 64, batch_size: int = 64,
                       temperature: float = 0.0, episodes=None, top_k: int = 0) -> dict:
    """One completion per row from a loaded ``model`` (in eval mode), scored by ``rewards``: ``n``, the per-reward
    ``means`` and the ``samples``. With ``episodes`` (a ``rollouts.EpisodeSettings``) each completion is an episode
    with the row's environment, its messages scored with the environment instance as TRL scores one in training;
    the result also holds ``tool_share``, the share of episodes that called a tool."""
    import torch

    padding_side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    prompts = list(rows["prompt"])
    columns = {name: list(rows[name]) for name in rows.column_names if name != "prompt"}
    if episodes is not None:
        try:
            shaped, columns["environments"] = run_episodes(model, tokenizer, rows, episodes, max_new_tokens,
                                                           temperature, batch_size, top_k)
        finally:
            tokenizer.padding_side = padding_side
        completions, calls = shaped, [tool_calls_made(messages) for messages in shaped]
    else:
        texts = []
        for start in range(0, len(prompts), batch_size):
            batch = prompts[start:start + batch_size]
            rendered = [tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
                        if not isinstance(p, str) else p for p in batch]
            encoded = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in rendered]
            with torch.inference_mode():
                texts += generate_shared_prefix(model, tokenizer, encoded, max_new_tokens, temperature, top_k)
        tokenizer.padding_side = padding_side
        completions, calls = texts, None
        shaped = [[{"role": "assistant", "content": c}] if not isinstance(p, str) else c for p, c in zip(prompts, texts)]
    scores = {}
    for reward in rewards:
        values = reward.score(prompts=prompts, completions=shaped, completion_ids=None, **columns)
        finite = [v for v in values if v is not None and math.isfinite(v)]
        scores[reward.__name__] = {"mean": sum(finite) / len(finite) if finite else None, "scored": len(finite),
                                   "values": values}
    result = {"n": len(prompts), "means": {k: v["mean"] for k, v in scores.items()},
              "samples": [{"prompt": p, "completion": c, **({"tool_calls": calls[i]} if calls is not None else {}),
                           **{k: v["values"][i] for k, v in scores.items()}}
                          for i, (p, c) in enumerate(zip(prompts, completions))]}
    if calls is not None:
        result["tool_share"] = sum(1 for n in calls if n) / len(calls) if calls else None
    return result


def score_models(models: list[tuple[str, str]], rows, rewards, max_new_tokens: int = 64,
                 temperature: float = 0.0, episodes=None, log=None, top_k: int = 0) -> list[dict]:
    """``sample_and_score`` for each ``(label, path)``, on the same rows; each result names its label. ``log`` is
    told as each model starts: which one, and on how many prompts or episodes."""
    results = []
    for index, (label, path) in enumerate(models, start=1):
        if log is not None:
            what = "episodes" if episodes is not None else "prompts"
            log(f"scoring {label}, model {index} of {len(models)}, on {len(rows)} {what}")
        result = sample_and_score(path, rows, rewards, max_new_tokens, temperature=temperature, episodes=episodes,
                                  top_k=top_k)
        result["model"] = label
        results.append(result)
    return results


def _cells(result: dict) -> dict:
    """A comparison row's values: each reward's mean, and with episodes the share of them that called a tool
    (`tool-use`: one word, so a reader splitting the table on spaces finds its columns)."""
    return {**result["means"], **({"tool-use": result["tool_share"]} if "tool_share" in result else {})}


def format_comparison(results: list[dict]) -> str:
    rows = [_cells(r) for r in results]
    names = list(rows[0])
    width = max(12, *(len(r["model"]) for r in results)) if results else 12
    lines = [f"{'model':<{width}}  " + "".join(f"{n:>14}" for n in names)]
    for result, values in zip(results, rows):
        cells = "".join(f"{'-' if values[n] is None else format(values[n], '.3f'):>14}" for n in names)
        lines.append(f"{result['model']:<{width}}  {cells}")
    if len(results) == 2:  # before and after: the change is what a reader looks for
        before, after = rows
        changes = ["-" if before[n] is None or after[n] is None else format(after[n] - before[n], "+.3f")
                   for n in names]
        cells = "".join(f"{change:>14}" for change in changes)
        lines.append(f"{'change':<{width}}  {cells}")
    return "\n".join(lines)
