"""The README's examples print exactly the output shown under them."""

from pathlib import Path

from grpo_core.testing import check_readme


def test_readme_examples_print_what_they_show():
    check_readme(Path(__file__).resolve().parents[1] / "README.md", examples=1)
