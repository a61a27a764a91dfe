"""Where the test suite's time goes, from a JUnit XML report of a whole run.

    PYTEST_ADDOPTS=--junitxml=/tmp/suite.xml make test     # or: .venv/bin/python -m pytest -q --junitxml=/tmp/suite.xml
    python scripts/test_durations.py /tmp/suite.xml [--top 25] [--markdown]

Prints the total, each test file's time and share (the files that take 80% of it), and the slowest tests. Setup and
teardown are part of a test's time in the report (a module fixture's server or training run is charged to the first
test that uses it).
"""

from __future__ import annotations

import argparse
import collections
import xml.etree.ElementTree as ElementTree


def cases(path: str) -> list[tuple[str, str, float, str]]:
    """``(file, test, seconds, outcome)`` of every test case in the report."""
    found = []
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "")
        parts = module.split(".")
        stem = next((i for i, part in enumerate(parts) if part.startswith("test_")), len(parts) - 1)
        file = "/".join(parts[:stem + 1]) + ".py"
        outcome = "failed" if case.find("failure") is not None or case.find("error") is not None else \
            "skipped" if case.find("skipped") is not None else "passed"
        found.append((file, case.get("name", ""), float(case.get("time", 0) or 0), outcome))
    return found


def table(rows: list[list[str]], header: list[str], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in [header, *rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    found = cases(args.report)
    total = sum(seconds for _, _, seconds, _ in found)
    outcomes = collections.Counter(outcome for *_, outcome in found)
    print(f"{len(found)} tests ({', '.join(f'{n} {o}' for o, n in sorted(outcomes.items()))}), {total:.0f} s\n")
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
    slowest = sorted(found, key=lambda case: -case[2])[:args.top]
    rows = [[f"{file}::{name}", f"{seconds:.1f}", f"{100 * seconds / total:.1f}%"] for file, name, seconds, _ in slowest]
    print(table(rows, ["test", "seconds", "share"], args.markdown))
    print(f"\nthe {len(slowest)} slowest take {100 * sum(c[2] for c in slowest) / total:.0f}% of the total")


if __name__ == "__main__":
    main()
