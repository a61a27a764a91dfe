"""Where the test suite's time goes, from a JUnit XML report of a whole run.

    make test REPORT=/tmp/suite          # /tmp/suite-workers.xml, then /tmp/suite-alone.xml
    python scripts/test_durations.py /tmp/suite-workers.xml /tmp/suite-alone.xml [--top 25] [--markdown]

Prints the wall time and the tests' own time (with two workers, the tests' times add up to about twice the wall
time), each test file's time and share (the files that take 80% of it), and the slowest tests. Setup and teardown
are part of a test's time in the report (a module fixture's server or training run is charged to the first test
that uses it). Several reports (the phases of one ``make test``) are read as one run.

``--save tests/durations.json`` writes each file's seconds there: the order in which ``make test`` hands files to
its workers, longest first (see conftest.py), so that the last file to finish is a short one. A stale file only
orders the run less well.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import xml.etree.ElementTree as ElementTree


def read_report(path: str) -> tuple[float, list[tuple[str, str, float, str]]]:
    """The run's wall time (pytest writes it on the report's test suite) and ``(file, test, seconds, outcome)`` of
    every test case in the report, from one parse of it."""
    root = ElementTree.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    wall = float(suite.get("time", 0) or 0) if suite is not None else 0.0
    found = []
    for case in root.iter("testcase"):
        module = case.get("classname", "")
        parts = module.split(".")
        stem = next((i for i, part in enumerate(parts) if part.startswith("test_")), len(parts) - 1)
        file = "/".join(parts[:stem + 1]) + ".py"
        outcome = "failed" if case.find("failure") is not None or case.find("error") is not None else \
            "skipped" if case.find("skipped") is not None else "passed"
        found.append((file, case.get("name", ""), float(case.get("time", 0) or 0), outcome))
    return wall, found


def table(rows: list[list[str]], header: list[str], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in [header, *rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", metavar="report")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--save", metavar="PATH", help="write {test file: seconds} to PATH (tests/durations.json)")
    args = parser.parse_args()
    missing = [report for report in args.reports if not os.path.isfile(report)]
    if missing:  # a phase that did not run (make test stops after a failed first phase) writes no report
        parser.error(f"no report at {', '.join(missing)}: give the JUnit reports make test REPORT=... wrote")
    reports = [read_report(report) for report in args.reports]
    found = [case for _, cases in reports for case in cases]
    total = sum(seconds for _, _, seconds, _ in found)
    wall = sum(seconds for seconds, _ in reports)
    outcomes = collections.Counter(outcome for *_, outcome in found)
    print(f"{len(found)} tests ({', '.join(f'{n} {o}' for o, n in sorted(outcomes.items()))}): {wall:.0f} s of wall "
          f"time, {total:.0f} s of the tests' own time\n")
    by_file: dict[str, list[float]] = collections.defaultdict(list)
    for file, _, seconds, _ in found:
        by_file[file].append(seconds)
    rows, running = [], 0.0
    for file, times in sorted(by_file.items(), key=lambda item: -sum(item[1])):
        if running >= 0.8 * total:
            break
        running += sum(times)
        rows.append([file, str(len(times)), f"{sum(times):.0f}", f"{100 * sum(times) / total:.1f}%",
                     f"{100 * running / total:.0f}%"])
    print(table(rows, ["file", "tests", "seconds", "share", "cumulative"], args.markdown) + "\n")
    if args.save:
        seconds = {file: round(sum(times), 1) for file, times in sorted(by_file.items())}
        with open(args.save, "w", encoding="utf-8") as handle:
            json.dump(seconds, handle, indent=0, sort_keys=True)
            handle.write("\n")
    slowest = sorted(found, key=lambda case: -case[2])[:args.top]
    rows = [[f"{file}::{name}", f"{seconds:.1f}", f"{100 * seconds / total:.1f}%"] for file, name, seconds, _ in slowest]
    print(table(rows, ["test", "seconds", "share"], args.markdown))
    print(f"\nthe {len(slowest)} slowest take {100 * sum(c[2] for c in slowest) / total:.0f}% of the total")


if __name__ == "__main__":
    main()
