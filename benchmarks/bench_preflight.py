"""Preflight of the default run's rewards (math + xml-format on 32 arithmetic rows) against its 3 s budget.

    python benchmarks/bench_preflight.py [--repeat 3]

Prints the median wall time of the preflight, of scoring the same rows once (the anchor: the
rewards' own cost, measured in the same run), their ratio, and the budget. Each repeat runs in
a fresh process, as a run does. Target: preflight at most 3 s.
"""

import argparse
import json
import statistics
import subprocess
import sys

BUDGET_S = 3.0

MEASURE = r"""
import json, time
from grpo_core.training.resolve import resolve
from grpo_core.settings.layers import settings_from_options
from grpo_core.training.runner import PREFLIGHT_BUDGET_S
from grpo_core.checks.run import preflight

run = resolve(settings_from_options(), log=lambda m: None)
rows = [dict(row) for row in run.dataset.select(range(min(len(run.dataset), 32)))]
start = time.perf_counter()
for reward in run.rewards:  # the anchor: every row scored once with its gold completion's shape
    columns = {name: [row[source] for row in rows] for name, source in reward.columns.items()}
    reward.score(prompts=[row["prompt"] for row in rows], completions=["<answer>1</answer>"] * len(rows),
           **{source: columns[name] for name, source in reward.columns.items()})
scoring = time.perf_counter() - start
start = time.perf_counter()
report = preflight(run.rewards, rows, budget_s=PREFLIGHT_BUDGET_S)
checks = time.perf_counter() - start
print(json.dumps({"preflight": checks, "scoring": scoring, "ok": report.ok}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one run: checks the benchmark runs")
    options = parser.parse_args()
    repeat = 1 if options.quick else options.repeat
    results = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", MEASURE], capture_output=True, text=True, check=True)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    checks = statistics.median(r["preflight"] for r in results)
    scoring = statistics.median(r["scoring"] for r in results)
    print(f"{'what':<36}{'median s':>10}{'ratio':>8}")
    print(f"{'score 32 rows once (anchor)':<36}{scoring:>10.3f}{1.0:>8.2f}")
    print(f"{'preflight (math, xml-format)':<36}{checks:>10.3f}{checks / max(scoring, 1e-9):>8.1f}")
    print(f"budget {BUDGET_S:.1f} s: {'within' if checks <= BUDGET_S else 'OVER'}; "
          f"preflight passed: {all(r['ok'] for r in results)}")


if __name__ == "__main__":
    main()
