"""The README's example snippets print exactly the output shown under them."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
EXAMPLES = re.findall(r"```python\n(.*?)```\n.*?```text\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_examples():
    assert len(EXAMPLES) == 3


@pytest.mark.parametrize("code, expected", EXAMPLES)
def test_readme_example_output_is_current(code, expected):
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout == expected
