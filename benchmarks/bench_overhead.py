"""The same GRPO run through `grpo-run` and through a plain TRL script, measured in the same run.

    python benchmarks/bench_overhead.py [--steps 20] [--repeat 2] [--quick]

Both train the tiny local model for the same number of steps with the same GRPOConfig,
dataset and length reward; the plain script is the anchor. Prints the best wall time of
each (whole process, imports included) and the ratio. Target: at most 1.05.

grpo-run runs Python's garbage collector rarely while the libraries load and keeps it off
them while training (grpo_core/training/collector.py), which a plain script does not do; the
third row gives the plain script the same settings, so its ratio is grpo-run's own cost
(callbacks, metrics, the plot, the final model, the summary).
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from bench_default_run import console_script  # one copy for the benchmarks that run grpo-run

PLAIN_SCRIPT = textwrap.dedent(
    """
    import gc
    import json
    import sys

    tuned = sys.argv[6:] == ["tuned"]  # the collector as grpo-run sets it (grpo_core/training/collector.py)
    if tuned:
        gc.set_threshold(50_000, 20, 100)
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    model_path, data, out, steps, same = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), json.loads(sys.argv[5])

    def length(completions, **kwargs):
        texts = [c[0]["content"] if isinstance(c, list) else c for c in completions]
        return [max(0.0, 1.0 - abs(len(t) - 20) / 20) for t in texts]

    args = GRPOConfig(
        output_dir=out, max_steps=steps, use_cpu=True, bf16=False, fp16=False, per_device_train_batch_size=4,
        num_generations=4, max_completion_length=32, logging_steps=1, report_to="none", save_strategy="no",
        dataloader_num_workers=0, seed=0, **same,
    )
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path, dtype="float32")
    dataset = load_dataset("json", data_files=data, split="train")
    trainer = GRPOTrainer(model=model, reward_funcs=[length], args=args, train_dataset=dataset, processing_class=tokenizer)
    if tuned:
        gc.set_threshold(700, 10, 10)
        gc.freeze()
    trainer.train()
    """
)


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode:
        raise SystemExit(f"{' '.join(command[:2])} ... failed (exit {result.returncode}):\n{result.stderr[-2000:]}")
    return time.perf_counter() - start


# GRPOConfig fields grpo-run would otherwise take from its profile and the default run's settings, given to both
# sides so that they train the same way (TRL's own defaults differ in each of them).
SAME = {"learning_rate": 1e-5, "temperature": 1.0, "scale_rewards": "group", "gradient_checkpointing": False}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="1 step, once each: checks the benchmark runs, no figure")
    options = parser.parse_args()
    if options.quick:
        options.steps, options.repeat = 1, 1
    from grpo_core.builtin.models import tiny_random_path

    model_path = tiny_random_path()
    work = Path(tempfile.mkdtemp(prefix="bench-overhead-"))
    data = work / "data.jsonl"
    data.write_text("".join(json.dumps({"prompt": [{"role": "user", "content": f"Count to {i}"}]}) + "\n" for i in range(64)))
    script = work / "plain_trl.py"
    script.write_text(PLAIN_SCRIPT)
    plain = [sys.executable, str(script), model_path, str(data), str(work / "plain"), str(options.steps), json.dumps(SAME)]
    ours = [
        console_script("grpo-run"), "--reward", "length", "--reward-arg", "length.target=20", "--dataset", "local",
        "--dataset-arg", f"path={data}", "--model", model_path, "--profile", "cpu", "--max-steps", str(options.steps),
        "--output-dir", str(work / "ours"), "--overwrite", "--no-preflight", "--set", "max_completion_length=32",
        "--set", "save_strategy=no", "--set", "seed=0", *(f"--set={key}={value}" for key, value in SAME.items()),
    ]
    plain_times, tuned_times, our_times = [], [], []
    for _ in range(options.repeat):  # alternate, so drift in machine load hits each
        plain_times.append(timed(plain))
        our_times.append(timed(ours))
        tuned_times.append(timed([*plain, "tuned"]))
    anchor, tuned, measured = min(plain_times), min(tuned_times), min(our_times)
    print(f"{'run':<48}{'best s':>9}{'ratio':>8}")
    print(f"{'plain TRL script (anchor)':<48}{anchor:>9.2f}{1.0:>8.3f}")
    print(f"{'grpo-run':<48}{measured:>9.2f}{measured / anchor:>8.3f}")
    print(f"{'plain TRL script, the collector as grpo-run sets it':<48}{tuned:>9.2f}{tuned / anchor:>8.3f}")
    print(f"grpo-run's own cost over the plain script with the same collector: {measured - tuned:+.2f} s "
          f"(ratio {measured / tuned:.3f})")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
