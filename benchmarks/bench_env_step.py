"""The time of a training step with an environment's tools against the same step without them.

    python benchmarks/bench_env_step.py [--model smollm2-135m] [--steps 6] [--repeat 2] [--quick]

Both runs are grpo-run on examples/data/products.jsonl with the math reward, the same model, seed, group size and
completion budget; the second adds --env examples/environments/calculator.py:Calculator. From each run's
metrics.jsonl (the first step left out: it warms up) it prints the mean step time (the best of --repeat runs of
each, taken in turns, so that a busy machine slows both alike), the tokens TRL counts per step
(prompts and completions: the tool template's system text describing the tools lengthens every prompt), the mean
completion length, how often the model called a tool, and the seconds spent inside the tools. The difference that
is not the tools' own time is the longer prompts and the extra generation turns after each tool result.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENVIRONMENT = ROOT / "examples" / "environments" / "calculator.py"
DATA = ROOT / "examples" / "data" / "products.jsonl"
GRPO_RUN = str(Path(sys.executable).with_name("grpo-run"))


def run(model: str, steps: int, out: Path, tools: bool) -> tuple[float, list[dict]]:
    args = [GRPO_RUN, "--reward", "math", "--dataset", "local", "--dataset-arg", f"path={DATA}", "--model", model,
            "--profile", "cpu", "--output-dir", str(out), "--max-steps", str(steps), "--no-preflight",
            "--set", "num_generations=4", "--set", "per_device_train_batch_size=4",
            "--set", "max_completion_length=48", "--set", "logging_steps=1", "--set", "save_strategy=no",
            "--set", "seed=0"]
    if tools:
        args += ["--env", f"{ENVIRONMENT}:Calculator"]
    started = time.perf_counter()
    result = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"grpo-run failed ({'with' if tools else 'without'} tools):\n{result.stderr[-3000:]}")
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return wall, [r for r in records if "step" in r and "step_time" in r]


def tokens_per_step(records: list[dict]) -> float:
    """TRL's num_tokens counts every prompt and completion token since the start: per step, on average."""
    last = records[-1]
    return float(last.get("num_tokens", 0)) / max(1, int(last["step"]))


def mean(records: list[dict], key: str) -> float:
    values = [float(r[key]) for r in records if isinstance(r.get(key), (int, float))]
    return statistics.fmean(values) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each, taken in turns; the best counts")
    parser.add_argument("--quick", action="store_true", help="the tiny test model, 2 steps, one run of each")
    options = parser.parse_args()
    model, steps, repeat = ("tiny-random", 2, 1) if options.quick else (options.model, options.steps, options.repeat)
    best: dict[bool, tuple[float, float, list[dict]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for attempt in range(max(1, repeat)):
            for tools in (False, True):
                wall, records = run(model, steps, Path(folder) / f"{tools}-{attempt}", tools)
                step = mean(records[1:] or records, "step_time")  # the first step warms up
                if tools not in best or step < best[tools][0]:
                    best[tools] = (step, wall, records)
    (plain_step, plain_wall, plain_all), (tools_step, tools_wall, tools_all) = best[False], best[True]
    plain, episodes = plain_all[1:] or plain_all, tools_all[1:] or tools_all
    tool_seconds = sum(mean(episodes, key) for key in {k for r in episodes for k in r
                                                       if k.startswith("tools/") and k.endswith("/seconds")})
    print(f"{model}, {steps} steps of 4 completions, 48 completion tokens, steps 2-{steps} averaged, best of {repeat}")
    print(f"{'':28}{'without tools':>15}{'with calculator':>17}")
    print(f"{'step time (s)':28}{plain_step:15.2f}{tools_step:17.2f}   ratio {tools_step / plain_step:.2f}")
    print(f"{'tokens per step (TRL)':28}{tokens_per_step(plain_all):15.0f}{tokens_per_step(tools_all):17.0f}"
          "   (prompts and completions)")
    print(f"{'completion length (tokens)':28}{mean(plain, 'completions/mean_length'):15.1f}"
          f"{mean(episodes, 'completions/mean_length'):17.1f}")
    print(f"{'tool calls per completion':28}{'-':>15}{mean(episodes, 'tools/call_frequency'):17.2f}")
    print(f"{'seconds in tools per step':28}{'-':>15}{tool_seconds:17.4f}   "
          f"({100 * tool_seconds / tools_step if tools_step else 0:.1f}% of the step)")
    rest = tools_step - plain_step - tool_seconds
    print(f"{'rest of the difference (s)':28}{'':15}{rest:17.2f}   longer prompts (the tools' description) and "
          "extra generation turns")
    print(f"whole process: {plain_wall:.1f} s without tools, {tools_wall:.1f} s with")


if __name__ == "__main__":
    main()
