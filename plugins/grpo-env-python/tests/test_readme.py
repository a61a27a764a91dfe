"""The README's example prints exactly the output shown under it."""

from pathlib import Path

from grpo_core.testing import check_readme


def test_readme_example_prints_what_it_shows(isolated):
    check_readme(Path(__file__).resolve().parents[1] / "README.md", examples=1)
