"""The example scores in the README are what the code prints."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_scores_are_current():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Example scores"):]
    code, output = re.findall(r"^```(?:python)?\n(.*?)^```$", section, re.S | re.M)[:2]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(README), "exec"), {})
    assert output.count("\n") >= 10
    assert printed.getvalue() == output
