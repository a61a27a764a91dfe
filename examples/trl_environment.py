"""A plain TRL script that trains with an environment, without grpo-run: grpo-env-calculator's ``Calculator`` as
``GRPOTrainer(environment_factory=...)``, on that plugin's ``products`` dataset, with grpo-core's math reward beside it.

    python examples/trl_environment.py                  # 2 steps on a tiny local model, CPU, offline
    python examples/trl_environment.py --model Qwen/Qwen2.5-0.5B-Instruct --max-steps 200

The environment class is TRL's own contract (``reset``, typed and documented tools, ``get_reward``), so TRL takes
it unchanged: it makes instances, resets one per episode with the dataset row, offers its methods as tools, and
adds ``get_reward()`` as a reward of weight 1 named after the class (``rewards/Calculator/mean``).
"""

import argparse
import functools
import json
import os
import warnings
from importlib import resources

import grpo_core
from grpo_env_calculator import Calculator


def tool_chat_template(tokenizer) -> None:
    """Give the tokenizer a chat template that renders tools when its own cannot: TRL's ChatML tool template for a
    model that speaks ChatML (grpo-run does the same, and takes --chat-template FILE for other models)."""
    from trl import supports_tool_calling

    if not supports_tool_calling(tokenizer):
        if "<|im_start|>" not in (tokenizer.chat_template or ""):
            raise SystemExit("the model's chat template renders no tools; give the tokenizer one that does")
        tokenizer.chat_template = resources.files("trl").joinpath("chat_templates/qwen2_5.jinja").read_text()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a local folder or hub id (default: grpo-core's tiny random model)")
    parser.add_argument("--max-steps", type=int, default=2)
    parser.add_argument("--output-dir", default="runs/trl-environment")
    options = parser.parse_args()

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is experimental in TRL: we know
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    # TRL still calls transformers' gradient_checkpointing names, which transformers 5 renamed (see trl_script.py).
    warnings.filterwarnings("ignore", message=r"`(is_)?gradient_checkpointing\w*` is deprecated", category=FutureWarning)

    dataset = grpo_core.load_dataset("products", {"size": 16})  # prompt, answer (the product), operands
    model = grpo_core.resolve_model(options.model or "tiny-random")
    tokenizer = AutoTokenizer.from_pretrained(model)
    tool_chat_template(tokenizer)
    # math scores the final answer; dataset="products" gives it the parameters that dataset asks for
    rewards = grpo_core.load_rewards(["math"], dataset="products")
    args = GRPOConfig(
        output_dir=options.output_dir,
        max_steps=options.max_steps,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=32,
        max_tool_calling_iterations=2,  # tool-calling turns an episode may make (TRL's default: no limit)
        reward_weights=[reward.weight for reward in rewards],  # TRL adds the environment's reward with weight 1
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=options.model is None,
        bf16=False,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=rewards,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        # TRL calls the factory with no argument: a class whose parameters all have defaults, or a partial
        environment_factory=functools.partial(Calculator, max_calls=4),
    )
    trainer.train()
    print("per step:")
    for entry in trainer.state.log_history:
        if "rewards/math/mean" in entry:
            shown = {k: v for k, v in entry.items() if k.endswith("/mean") or k.startswith("tools/")}
            print(f"  step {entry['step']}: {json.dumps(shown)}")


if __name__ == "__main__":
    main()
