"""A plain TRL script that uses installed grpo rewards directly, without grpo-run.

    python examples/trl_script.py                       # 2 steps on a tiny local model, CPU, offline
    python examples/trl_script.py --model Qwen/Qwen2.5-0.5B-Instruct --max-steps 200

``grpo_core.load_rewards`` returns TRL-ready reward functions: each takes TRL's batch
signature, accepts plain-text and chat completions, and is named after its plugin, so TRL
logs ``rewards/math/mean`` and ``rewards/xml-format/mean``.
"""

import argparse
import json
import warnings
from pathlib import Path

import grpo_core

DATA = Path(__file__).parent / "data" / "addition.jsonl"
SYSTEM_PROMPT = "Answer with the number inside <answer></answer>, for example <answer>7</answer>."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a local folder or hub id (default: grpo-core's tiny random model)")
    parser.add_argument("--max-steps", type=int, default=2)
    parser.add_argument("--output-dir", default="runs/trl-script")
    options = parser.parse_args()

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    # TRL still calls transformers' gradient_checkpointing names, which transformers 5 renamed to
    # activation_checkpointing and warns about on each use: the warnings are TRL's to fix, not this script's.
    warnings.filterwarnings("ignore", message=r"`(is_)?gradient_checkpointing\w*` is deprecated", category=FutureWarning)

    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    for row in rows:  # the math reward reads the 'answer' column; the format reward wants <answer> tags
        row["prompt"] = [{"role": "system", "content": SYSTEM_PROMPT}, *row["prompt"]]
    dataset = Dataset.from_list(rows)

    rewards = grpo_core.load_rewards(["math", "xml-format"], params={"xml-format": {"tags": "answer"}})
    model = grpo_core.resolve_model(options.model or "tiny-random")
    args = GRPOConfig(
        output_dir=options.output_dir,
        max_steps=options.max_steps,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=16,
        reward_weights=[reward.weight for reward in rewards],
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=options.model is None,
        bf16=False,
    )
    trainer = GRPOTrainer(model=model, reward_funcs=rewards, args=args, train_dataset=dataset)
    trainer.train()
    print("reward means per step:")
    for entry in trainer.state.log_history:
        if "rewards/math/mean" in entry:
            means = {k: v for k, v in entry.items() if k.startswith("rewards/") and k.endswith("/mean")}
            print(f"  step {entry['step']}: {json.dumps(means)}")


if __name__ == "__main__":
    main()
