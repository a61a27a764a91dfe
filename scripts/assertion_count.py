"""The test suite's assertions, counted at a commit, so that a change that makes the suite faster can show it
asserts no less.

    python scripts/assertion_count.py                  # the working tree
    python scripts/assertion_count.py --rev 8e8d6a0    # a commit, read with git show
    python scripts/assertion_count.py --rev 8e8d6a0 --compare HEAD

An assertion is an ``assert`` statement or a ``pytest.raises`` / ``pytest.warns`` block in a test file (``test_*.py``
or ``conftest.py``, or a helper module next to them). Distinct assertions are counted per file by their source text,
so one assert in a loop is one, and the same assert written in two tests of a file is one too: merging two tests
that asserted the same fact keeps the count, dropping a fact lowers it.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys

FOLDERS = ("tests/", "plugins/", "examples/")


def test_files(rev: str | None) -> list[str]:
    listing = subprocess.run(["git", "ls-files"] if rev is None else ["git", "ls-tree", "-r", "--name-only", rev],
                             capture_output=True, text=True, check=True).stdout.split()
    return [path for path in listing if path.endswith(".py") and path.startswith(FOLDERS)
            and ("/tests/" in path or path.startswith("tests/"))]


def source(path: str, rev: str | None) -> str:
    if rev is None:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    return subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True).stdout


def assertions(text: str) -> set[str]:
    """The distinct assertions of one file's source, as normalised source text."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Assert):
            found.add("assert " + ast.unparse(node.test))
        elif isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and ast.unparse(call.func) in ("pytest.raises", "pytest.warns",
                                                                             "raises", "warns"):
                    found.add(ast.unparse(call) + ": " + ast.unparse(node.body[0]))
    return found


def count(rev: str | None) -> dict[str, int]:
    return {path: len(assertions(source(path, rev))) for path in test_files(rev)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", help="a commit (default: the working tree)")
    parser.add_argument("--compare", help="a second commit (or 'worktree') to compare with --rev, file by file")
    args = parser.parse_args()
    before = count(args.rev)
    if not args.compare:
        print(f"{sum(before.values())} distinct assertions in {len(before)} test files at {args.rev or 'the working tree'}")
        return 0
    after = count(None if args.compare == "worktree" else args.compare)
    for path in sorted(set(before) | set(after)):
        if before.get(path, 0) != after.get(path, 0):
            print(f"{path}: {before.get(path, 0)} -> {after.get(path, 0)}")
    total_before, total_after = sum(before.values()), sum(after.values())
    print(f"{total_before} -> {total_after} distinct assertions ({args.rev} -> {args.compare})")
    return 1 if total_after < total_before else 0


if __name__ == "__main__":
    sys.exit(main())
