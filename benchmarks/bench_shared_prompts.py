"""Training steps with each prompt read once (share_prompts, the default) and with TRL's own pass, side by side.

    python benchmarks/bench_shared_prompts.py [--steps 4] [--profile cpu] [--config FILE] [--quick]

Runs the default run's settings (or a config file's) for a few steps on the same seed twice, with
``share_prompts: false`` and then with ``share_prompts: true``, each into a folder of its own, and prints each run's
seconds per step (the first step apart: the shared run compares its pass with TRL's there, on a few rows), the ratio
of the later steps, and whether the two runs logged the same losses and gradient norms: in float32 they do (the
same completions are sampled and the same gradients taken, to float rounding); with bfloat16 autocast each pass
rounds its own way, so the sampled completions, and then the losses, part after the first step.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from bench_default_run import console_script


def config_file(base: str | None, folder: Path, share: bool, steps: int, profile: str, model: str | None) -> Path:
    """A config file of ``base``'s settings (the default run's without one) for ``steps`` steps, no comparison."""
    import yaml

    from grpo_core.settings import layers

    source = Path(base) if base else Path(layers.__file__).with_name("default_run.yaml")
    settings = yaml.safe_load(source.read_text(encoding="utf-8"))
    settings.update(max_steps=steps, compare=0, profile=profile, share_prompts=share, output_dir=str(folder / "run"),
                    save_steps=steps + 1, keep_checkpoints=False, **({"model": model} if model else {}))
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    return path


def run(share: bool, args, out: Path) -> dict:
    folder = out / ("shared" if share else "trl")
    folder.mkdir(parents=True, exist_ok=True)
    command = [console_script("grpo-run"), "--config", str(config_file(args.config, folder, share, args.steps,
                                                                        args.profile, args.model)), "--overwrite"]
    if args.quick:
        command.append("--no-preflight")
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    wall = time.perf_counter() - start
    (folder / "output.txt").write_text(result.stdout + result.stderr, encoding="utf-8")
    if result.returncode:
        raise SystemExit(f"grpo-run exited {result.returncode}; see {folder / 'output.txt'}:\n{result.stderr[-2000:]}")
    steps = [json.loads(line) for line in (folder / "run" / "metrics.jsonl").read_text().splitlines()
             if '"step_time"' in line]
    warnings = [line for line in result.stderr.splitlines()
                if "share their prompt" in line or "no longer shares" in line]
    return {"steps": steps, "wall": wall, "warnings": warnings}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4, help="training steps of each run (default 4)")
    parser.add_argument("--profile", default="cpu", help="hardware profile of both runs (default cpu: float32)")
    parser.add_argument("--config", help="a config file to run instead of the default run's settings")
    parser.add_argument("--model", help="another model for both runs")
    parser.add_argument("--out", help="the two runs' folders go here (default: a temporary folder)")
    parser.add_argument("--quick", action="store_true", help="two steps of the tiny model: checks the benchmark runs")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.model = 2, "tiny-random"
    out = Path(args.out or tempfile.mkdtemp(prefix="bench-shared-prompts-"))
    results = {share: run(share, args, out) for share in (False, True)}
    print(f"{'pass':<22}{'first step s':>13}{'later steps s':>15}{'wall s':>8}")
    later = {}
    for share, result in results.items():
        times = [row["step_time"] for row in result["steps"]]
        later[share] = sum(times[1:]) / len(times[1:]) if len(times) > 1 else float("nan")
        print(f"{'each prompt once' if share else 'TRL own (every copy)':<22}{times[0]:>13.2f}{later[share]:>15.2f}"
              f"{result['wall']:>8.1f}")
    print(f"later steps: TRL's pass takes {later[False] / later[True]:.2f} times as long as the shared one")
    same = all(abs(a[key] - b[key]) <= 1e-4 * max(1.0, abs(a[key]))
               for a, b in zip(results[False]["steps"], results[True]["steps"]) for key in ("loss", "grad_norm"))
    print(f"losses and gradient norms of the {len(results[True]['steps'])} steps the same to 1e-4: "
          f"{'yes' if same else 'no'}")
    if not same:  # in bfloat16 each pass rounds its own way, so the sampled completions part after the first step
        for share, result in results.items():
            print(f"  {'shared' if share else 'TRL'} losses: "
                  + ", ".join(f"{row['loss']:.5f}" for row in result["steps"]))
    for line in results[True]["warnings"]:
        print(f"shared run warned: {line}")


if __name__ == "__main__":
    main()
