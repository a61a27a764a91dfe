"""The default run (`grpo-run` with no arguments) on several seeds: does it learn on every one, and how fast?

    python benchmarks/bench_default_run.py [--seeds 0,1,2,3,4] [--jobs 1] [--out runs/bench-default] [-- EXTRA ARGS]

Another run's figures the same way: `-- --config examples/configs/calculator.yaml` (a run with an environment also
prints the share of held-out episodes that called a tool, before -> after).

Each seed is the default run with `--set seed=N`, into its own output folder. Per seed it prints
the held-out greedy math accuracy before -> after training (and on how many prompts), the
training math reward over the first and last fifth of steps, the wall time and the load average
while it ran. The target is a held-out gain of at least 0.15 on every seed; the wall time is
only comparable between runs on an otherwise idle machine (the load column says how idle).
Anything after `--` is passed to every `grpo-run` (e.g. `-- --max-steps 4` for a quick try;
`-- --control shuffled` trains each seed's control run too and prints its gain over the control).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TARGET_GAIN = 0.15


def console_script(name: str) -> str:
    """A console script of this interpreter's environment (the venv need not be on PATH)."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name) or name


def _comparison(output: str) -> list[str]:
    """The lines of the run's printed held-out comparison, from its title on (none if it printed none)."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("held-out comparison")), None)
    return [] if start is None else lines[start:]


def held_out(output: str, reward: str = "math") -> tuple[float | None, float | None, int | None]:
    """(before, after, n) from the run's printed held-out comparison."""
    lines = _comparison(output)
    if not lines:
        return None, None, None
    words = lines[0].split(" on ", 1)[-1].split()
    n = int(words[0]) if words and words[0].isdigit() else None
    names = _columns(lines)  # "math  xml-format" (and an environment's and "tool-use" with one)
    if reward not in names or len(lines) < 4:
        return None, None, n
    column = names.index(reward) - len(names)
    values = [lines[2].split()[column], lines[3].split()[column]]
    before, after = (None if v == "-" else float(v) for v in values)
    return before, after, n


def _columns(comparison: list[str]) -> list[str]:
    return comparison[1].split()[1:] if len(comparison) > 1 else []


def held_out_columns(output: str) -> list[str]:
    """The columns of the run's printed held-out comparison (each reward's, and with an environment its own reward's
    and ``tool-use``)."""
    return _columns(_comparison(output))


def fifths(metrics: Path, key: str = "rewards/math/mean") -> tuple[float | None, float | None]:
    """Mean of ``key`` over the first and last fifth of logged steps."""
    steps = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()] if metrics.exists() else []
    values = [r[key] for r in steps if r.get(key) is not None]
    if not values:
        return None, None
    size = max(1, round(len(values) / 5))
    return sum(values[:size]) / size, sum(values[-size:]) / size


def run_seed(seed: int, out: Path, extra: list[str]) -> dict:
    folder = out / f"seed{seed}"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(folder.with_name(f"{folder.name}-control"), ignore_errors=True)  # with `-- --control shuffled`
    command = [console_script("grpo-run"), "--output-dir", str(folder), "--set", f"seed={seed}", *extra]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bench_output.txt").write_text(result.stdout + result.stderr)
    before, after, n = held_out(result.stderr)
    tools_before, tools_after, _ = held_out(result.stderr, "tool-use")
    # with an environment: every other column (the environment's own reward: episodes whose call gave the answer)
    others = [(name, *held_out(result.stderr, name)[:2]) for name in held_out_columns(result.stderr)
              if tools_before is not None and name not in ("math", "tool-use")]
    first, last = fifths(folder / "metrics.jsonl")
    control = [line for line in result.stderr.splitlines() if "gain over control" in line]
    return {"seed": seed, "rc": result.returncode, "before": before, "after": after, "n": n, "tools": (tools_before, tools_after), "others": others, "first": first,
            "last": last, "wall": wall, "load": (load_before + os.getloadavg()[0]) / 2, "control": control}


HEADER = (f"{'seed':>4}  {'held-out math before -> after (n)':<36}{'gain':>7}  {'train math 1st -> last fifth':<30}"
          f"{'wall s':>7}{'load':>6}")


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def gain_of(row: dict) -> float | None:
    return None if row["before"] is None or row["after"] is None else row["after"] - row["before"]


def format_row(row: dict, out: str) -> str:
    """One seed's line of the table (benchmarks/seed_gains.py reads these back)."""
    gain = gain_of(row)
    held = f"{_fmt(row['before'])} -> {_fmt(row['after'])} (n={row['n']})"
    curve = f"{_fmt(row['first'])} -> {_fmt(row['last'])}"
    status = "" if row["rc"] == 0 else f"  exit {row['rc']}, see {out}/seed{row['seed']}/bench_output.txt"
    return (f"{row['seed']:>4}  {held:<36}{'-' if gain is None else format(gain, '+.3f'):>7}  {curve:<30}"
            f"{row['wall']:>7.0f}{row['load']:>6.1f}{status}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated seeds")
    parser.add_argument("--jobs", type=int, default=1, help="seeds run at once (1 for wall times worth quoting)")
    parser.add_argument("--out", default="runs/bench-default", help="one folder per seed goes here")
    parser.add_argument("extra", nargs="*", help="after --: more grpo-run arguments")
    parser.add_argument("--quick", action="store_true", help="one step of the tiny model on seed 0, compared on 2 "
                        "questions: checks the benchmark runs, no figure")
    args = parser.parse_args()
    if args.quick:
        import tempfile

        args.seeds, args.out = "0", tempfile.mkdtemp(prefix="bench-default-")
        args.extra += ["--model", "tiny-random", "--max-steps", "1", "--compare", "2", "--no-preflight"]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    print(HEADER, flush=True)
    rows = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for row in pool.map(lambda seed: run_seed(seed, Path(args.out), args.extra), seeds):  # each as it ends
            rows.append(row)
            print(format_row(row, args.out))
            if row["tools"][0] is not None:  # a run with an environment: the share of episodes that called a tool
                print(f"      held-out tool use {_fmt(row['tools'][0])} -> {_fmt(row['tools'][1])}")
            for name, before, after in row.get("others", ()):  # and its own reward's
                print(f"      held-out {name} {_fmt(before)} -> {_fmt(after)}")
            for line in row["control"]:  # a run with --control: base, trained, control and the gain over the control
                print(f"      {line}")
            sys.stdout.flush()
    if args.quick and any(row["rc"] for row in rows):
        raise SystemExit("a run failed (see its bench_output.txt above)")
    known = [g for g in map(gain_of, rows) if g is not None]
    if known:
        walls = [row["wall"] for row in rows]
        met = len(known) == len(rows) and min(known) >= TARGET_GAIN
        print(f"held-out gain {min(known):+.3f} to {max(known):+.3f} over {len(known)} seeds (target at least "
              f"+{TARGET_GAIN} on every seed: {'met' if met else 'NOT met'}); "
              f"wall {min(walls):.0f} to {max(walls):.0f} s")


if __name__ == "__main__":
    main()
