"""The parts of one default-run training step timed alone, in float32 and with bfloat16 autocast.

    python benchmarks/bench_step_parts.py [--model smollm2-135m] [--repeats 2] [--quick]

For the default run's shapes (two arithmetic prompts with their worked example, 8 completions each of exactly
`--tokens` tokens, sampled at temperature 1.2): the time to generate the 16 completions, then one forward and one
backward pass over the 16 sequences (the completions' logits, log-softmax), with the threads torch picks. Each mode
runs `--repeats` times and the last repetition is printed, so the first's warm-up is not counted. It says where a
step spends its time on a CPU without bfloat16 (the `cpu` profile) against one with it (`cpu-bf16`); the
optimizer, the rewards and TRL's bookkeeping are not in these parts.
"""

import argparse
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from grpo_core import load_dataset, resolve_model


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=24, help="tokens per completion (the default run's most)")
    parser.add_argument("--quick", action="store_true", help="the tiny model, once: checks the benchmark runs")
    args = parser.parse_args()
    if args.quick:
        args.model, args.repeats = "tiny-random", 1
    torch.manual_seed(0)
    path = resolve_model(args.model)
    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    rows = load_dataset("arithmetic", {"size": 20, "difficulty": "easy", "few_shot": 1, "worked": True})
    prompts = [tokenizer.apply_chat_template(rows[i]["prompt"], tokenize=False, add_generation_prompt=True)
               for i in range(2)] * 8
    encoded = tokenizer(prompts, return_tensors="pt", padding=True)
    print(f"{args.model}: {len(prompts)} completions of {args.tokens} tokens after prompts of "
          f"{encoded.input_ids.shape[1]} tokens; {torch.get_num_threads()} torch threads")
    print(f"{'mode':<8}{'generate s':>12}{'forward s':>11}{'backward s':>12}{'sum s':>8}")
    for mode in ("float32", "bf16"):
        for _ in range(args.repeats):
            parts = step_parts(model, tokenizer, encoded, args.tokens, bf16=mode == "bf16")
        print(f"{mode:<8}" + "".join(f"{value:>{width}.2f}" for value, width in zip(parts, (12, 11, 12))) +
              f"{sum(parts):>8.2f}")


def step_parts(model, tokenizer, encoded, tokens: int, bf16: bool) -> tuple[float, float, float]:
    """Seconds to generate, to run the forward pass and to run the backward pass."""
    autocast = lambda: torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16)  # noqa: E731
    model.eval()
    start = time.perf_counter()
    with torch.no_grad(), autocast():
        out = model.generate(**encoded, max_new_tokens=tokens, min_new_tokens=tokens, do_sample=True,
                             temperature=1.2, top_k=None, top_p=None, pad_token_id=tokenizer.pad_token_id)
    generate = time.perf_counter() - start
    model.train()
    start = time.perf_counter()
    with autocast():
        logits = model(input_ids=out, attention_mask=(out != tokenizer.pad_token_id).long(),
                       logits_to_keep=tokens + 1).logits
        loss = torch.log_softmax(logits.float(), -1).mean()
    forward = time.perf_counter() - start
    start = time.perf_counter()
    loss.backward()
    backward = time.perf_counter() - start
    model.zero_grad(set_to_none=True)
    return generate, forward, backward


if __name__ == "__main__":
    main()
