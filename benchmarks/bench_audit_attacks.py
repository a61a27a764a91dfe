"""What the check's degenerate audit says about rewards that pay an attack, and about sound ones.

    python benchmarks/bench_audit_attacks.py [--seed N]

For each reward in tests/audit_fixtures.py (third-party rewards that declare no checks, one per attack, and
sound ones), without rows and on 20 rows of the ``arithmetic`` dataset: pass or FAIL, and the completion the
failure names with its score. Run it on two versions of grpo-core to compare them.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [sys.path[0], os.environ.get("PYTHONPATH")]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, to see that it runs (no figure to quote)")
    args = parser.parse_args()
    seed = args.seed
    import audit_fixtures as fx

    from grpo_core import Reward
    from grpo_core.checks.run import run_checks
    from grpo_core.plugins.loading import load_dataset

    data = load_dataset("arithmetic", {"size": 20})
    rows = [dict(row) for row in data]  # as preflight reads them (grpo_core.checks.dataset_rows, not in older versions)
    specs = [fx.CONTAINS_GOLD, fx.ANSWER_LENGTH, fx.ANY_IN_TAG, fx.ANY_BOXED, fx.VISIBLE_LENGTH, fx.TAG_ANSWER,
             fx.ANSWER_GIVEN][: 2 if args.quick else None]
    for spec in specs:
        for where, given in (("no rows", None), ("arithmetic rows", rows)):
            report = run_checks([Reward(spec, spec.resolve())], max_examples=20, seed=seed, rows=given)
            result = report.result(spec.name, "degenerate")
            if report.ok:
                print(f"{spec.name:15} {where:16} pass")
                continue
            found = re.search(r"; ([^;]*?, scored [^;,]*)", result.message) if result else None
            what = found.group(1) if found else "; ".join(report.failed(spec.name))
            what = re.sub(r"'[^']{60,}'", lambda m: m.group()[:40] + "...'", what)  # the completion, shortened
            print(f"{spec.name:15} {where:16} FAIL {what}")


if __name__ == "__main__":
    main()
