"""Peak memory of each phase of a run, `grpo-run` beside a plain TRL script with the same settings.

    python benchmarks/bench_memory.py [--out runs/bench-memory] [--quick] [-- EXTRA GRPO-RUN ARGS]

Runs `grpo-run` (the default run unless arguments after `--` say otherwise), then a plain script that gives TRL's
GRPOTrainer the same GRPOConfig, model folder, dataset rows and reward functions (`grpo-run --dry-run` says what
they are; the rows and rewards come from the public `load_dataset` and `load_rewards`) and trains. Each process
tree's resident memory (RSS, the sum over the process and its children) is read every 50 ms and each reading is
given to the phase the run last announced:

- start: imports, settings, plugins, the dataset;
- preflight: grpo-run's quick property checks of the rewards, then its model loading and TRL's trainer set-up
  (grpo-run prints `training:` once TRL begins to train);
- train: from `training:` to the last step and the saved model; the plain script announces it before it builds
  its trainer, so there the model loading falls in train;
- compare: the held-out comparison (base, trained and, with `--control`, the control model).

The plain script has no preflight and no comparison. Target: grpo-run's peak at most the plain script's plus one
more model for the comparison. Memory does not depend on other load on the machine; wall times here do.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

from bench_default_run import console_script  # one copy for the benchmarks that run grpo-run

# Each phase begins at the first output line that starts with one of its markers, in this order.
PHASES = (("start", ()), ("preflight", ("preflight:",)), ("train", ("training:", "PHASE train")),
          ("compare", ("comparison:", "held-out comparison", "control run")), ("end", ("total time:", "PHASE end")))

PLAIN_SCRIPT = textwrap.dedent(
    """
    import json
    import sys

    from grpo_core import load_dataset, load_rewards, resolve_model
    from trl import GRPOConfig, GRPOTrainer

    run, out = json.loads(open(sys.argv[1]).read()), sys.argv[2]
    names = [r["name"] for r in run["rewards"]]
    rewards = load_rewards(names, {r["name"]: r["params"] for r in run["rewards"]},
                           {r["name"]: r["weight"] for r in run["rewards"]})
    dataset = load_dataset(run["settings"]["dataset"], run["settings"]["dataset_args"], rewards)
    config = {**run["grpo_config"], "output_dir": out, "disable_tqdm": True}
    print("PHASE train", flush=True)
    trainer = GRPOTrainer(model=resolve_model(run["model"]["name"]), reward_funcs=rewards, args=GRPOConfig(**config),
                          train_dataset=dataset)
    trainer.train()
    trainer.save_model(out + "/final")
    print("PHASE end", flush=True)
    """
)


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/status") as status:
                total += next((int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:")), 0)
        except OSError:
            pass
    return total


def measured(command: list[str], log: Path) -> tuple[dict[str, float], float, int]:
    """Run ``command``; the peak GiB of each phase it went through, its wall seconds and its exit status."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1, env=env)
    at, peaks, done = [0], {}, threading.Event()  # at[0]: the index in PHASES of the phase the run is in

    def sample() -> None:
        while not done.is_set():
            rss, phase = tree_rss(proc.pid), PHASES[at[0]][0]
            peaks[phase] = max(peaks.get(phase, 0), rss)
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    with log.open("w") as out:
        for line in proc.stdout:
            out.write(line)
            at[0] = next((i for i in range(at[0] + 1, len(PHASES)) if line.startswith(PHASES[i][1])), at[0])
    status = proc.wait()
    done.set()
    sampler.join()
    return {k: v / 2**30 for k, v in peaks.items() if k != "end"}, time.perf_counter() - start, status


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="runs/bench-memory", help="the two runs' folders and logs go here")
    parser.add_argument("extra", nargs="*", help="after --: grpo-run arguments (default: the default run)")
    parser.add_argument("--quick", action="store_true", help="one step of the tiny model, compared on 2 questions: "
                        "checks the benchmark runs, no figure")
    args = parser.parse_args()
    if args.quick:
        args.extra += ["--model", "tiny-random", "--max-steps", "1", "--compare", "2", "--no-preflight"]
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    grpo_run = [console_script("grpo-run"), *args.extra, "--output-dir", str(out / "grpo-run")]
    dry = subprocess.run([*grpo_run, "--dry-run"], capture_output=True, text=True,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if dry.returncode:
        raise SystemExit(f"grpo-run --dry-run exited {dry.returncode}: {dry.stderr.strip()[-500:]}")
    resolved = out / "run.json"
    resolved.write_text(dry.stdout)
    script = Path(tempfile.mkdtemp(prefix="bench-memory-")) / "plain_trl.py"
    script.write_text(PLAIN_SCRIPT)
    rows = {}
    for name, command in (("grpo-run", grpo_run), ("plain TRL", [sys.executable, str(script), str(resolved),
                                                                  str(out / "plain")])):
        peaks, wall, status = measured(command, out / f"{name.replace(' ', '-')}.log")
        if status:
            raise SystemExit(f"{name} exited {status}; its output is in {out}")
        rows[name] = peaks
        print(f"{name}: {wall:.0f} s, load average {os.getloadavg()[0]:.1f}", flush=True)
    phases = [p for p, _ in PHASES if any(p in r for r in rows.values())]  # "end" holds no reading
    print(f"\npeak resident memory (GiB), process and children\n{'phase':<10}" +
          "".join(f"{name:>12}" for name in rows))
    for phase in phases:
        print(f"{phase:<10}" + "".join(f"{r[phase]:>12.2f}" if phase in r else f"{'-':>12}" for r in rows.values()))
    print(f"{'whole run':<10}" + "".join(f"{max(r.values()):>12.2f}" for r in rows.values()))


if __name__ == "__main__":
    main()
