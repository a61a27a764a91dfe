"""The example scores in the README are what the code prints."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _examples():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Example scores"):]
    return re.findall(r"^```python\n(.*?)^```\n\n^```\n(.*?)^```$", section, re.S | re.M)


def test_readme_example_scores_are_current():
    examples = _examples()
    assert len(examples) == 3
    for code, output in examples:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, str(README), "exec"), {})
        assert output.count("\n") >= 8
        assert printed.getvalue() == output
