"""How long the reward property checks take, against their budgets.

    /work/venv/bin/python benchmarks/bench_check.py [--seed N] [--repeat N]

Measures, on this machine:
- ``grpo-run check`` over every installed reward at the default example count (budget: 60 s
  for the four shipped rewards on a 2-core laptop), run as a user runs it;
- ``preflight`` as training runs it: the selected rewards on real rows of the selected dataset
  (math + xml-format + length on ``arithmetic``, json-schema on ``json-extraction``), budget 10 s;
- the anchor: ``grpo-run --help`` in the same run (process start and plugin discovery), and the
  load average, since other work on the machine stretches every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CHECK_BUDGET_S = 60.0
PREFLIGHT_BUDGET_S = 10.0
SHIPPED = ("length", "math", "xml-format", "json-schema")


def grpo_run(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    script = os.path.join(os.path.dirname(sys.executable), "grpo-run")
    command = [script, *args] if os.path.exists(script) else [sys.executable, "-m", "grpo_core.cli", *args]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return time.perf_counter() - started, result


def rows_of(dataset_name: str, n: int = 64) -> list[dict]:
    from grpo_core.plugins import get_registry

    spec = get_registry().dataset(dataset_name)
    dataset = spec.load(**spec.resolve({"size": n}))
    return [dict(row) for row in dataset.select(range(min(n, len(dataset))))]


def bench_preflight(names: list[str], dataset_name: str) -> tuple[float, bool]:
    from grpo_core import load_rewards
    from grpo_core.checks.report import format_report
    from grpo_core.checks.run import preflight

    rows = rows_of(dataset_name)
    rewards = load_rewards(names)
    started = time.perf_counter()
    report = preflight(rewards, rows, budget_s=PREFLIGHT_BUDGET_S)
    elapsed = time.perf_counter() - started
    if not report.ok:
        print(format_report(report))
    return elapsed, report.ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1, help="runs of grpo-run check (the best and worst are shown)")
    parser.add_argument("--quick", action="store_true", help="grpo-run check of the length reward only: checks the "
                        "benchmark runs")
    options = parser.parse_args()
    quick = ["--reward", "length", "--max-examples", "5"] if options.quick else []
    os.environ["HF_HUB_OFFLINE"] = "1"

    from grpo_core.checks.run import DEFAULT_MAX_EXAMPLES
    from grpo_core.plugins import get_registry

    installed = sorted(get_registry().items["rewards"])
    missing = [name for name in SHIPPED if name not in installed]
    print(f"machine: {os.cpu_count()} cores; load average before: {os.getloadavg()[0]:.2f}")
    print(f"installed rewards: {', '.join(installed)}" + (f" (shipped but missing: {', '.join(missing)})" if missing else ""))

    anchor, result = grpo_run("--help")
    print(f"anchor  grpo-run --help: {anchor:.2f} s (exit {result.returncode})")

    times = []
    for _ in range(options.repeat):
        elapsed, result = grpo_run("check", "--seed", str(options.seed), "--json", *quick)
        times.append(elapsed)
        try:
            data = json.loads(result.stdout)
        except json.JSONDecodeError:
            print(result.stdout[-2000:], result.stderr[-2000:])
            raise SystemExit("grpo-run check did not print a JSON report")
        per_reward: dict[str, float] = {}
        for r in data["results"]:
            per_reward[r["reward"]] = per_reward.get(r["reward"], 0.0) + r["seconds"]
        failed = [f"{r['reward']}/{r['property']}" for r in data["results"] if r["status"] == "fail"]
        for r in data["results"]:
            if r["status"] == "fail":
                print(f"  {r['reward']} / {r['property']}: {r['message']}\n    {r['counterexample']}")
        print(f"grpo-run check ({len(per_reward)} rewards, --max-examples {DEFAULT_MAX_EXAMPLES}): {elapsed:.1f} s, "
              f"exit {result.returncode}; per reward: "
              + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in sorted(per_reward.items()))
              + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    best, worst = min(times), max(times)
    print(f"  best {best:.1f} s = {best / CHECK_BUDGET_S:.2f} x the {CHECK_BUDGET_S:.0f} s budget"
          + (f", worst {worst:.1f} s = {worst / CHECK_BUDGET_S:.2f} x" if len(times) > 1 else "")
          + f", {best / anchor:.0f} x the anchor")

    total = 0.0
    for names, dataset_name in ((["math", "xml-format", "length"], "arithmetic"), (["json-schema"], "json-extraction")):
        names = [n for n in names if n in installed]
        if not names or dataset_name not in get_registry().items["datasets"]:
            print(f"preflight {'+'.join(names) or '(none)'} on {dataset_name}: skipped (not installed)")
            continue
        elapsed, ok = bench_preflight(names, dataset_name)
        total = max(total, elapsed)
        print(f"preflight {'+'.join(names)} on {dataset_name}: {elapsed:.1f} s = "
              f"{elapsed / PREFLIGHT_BUDGET_S:.2f} x the {PREFLIGHT_BUDGET_S:.0f} s budget ({'ok' if ok else 'FAILED'})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
