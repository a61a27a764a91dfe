"""What plugins' tests share, from grpo_core.testing: check_readme, offline_hub and fresh_registry_fixture."""

import subprocess
import sys
import textwrap

import pytest

from grpo_core.testing import check_readme

README = """\
# A plugin

```python
print(1 + 1)
```

prints

```text
2
```

## Not an example

```python
raise SystemExit("a python block without an output block under it is not run")
```

## Another section

```
an output block in a later section belongs to no example
```

```python
print("a", "b", sep="\\n")
```

````
a
b
````
"""


def write(tmp_path, text):
    path = tmp_path / "README.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_check_readme_runs_each_example_against_the_block_under_it(tmp_path):
    check_readme(write(tmp_path, README), examples=2)


def test_check_readme_fails_where_an_example_prints_something_else(tmp_path):
    path = write(tmp_path, README.replace("```text\n2\n", "```text\n3\n"))
    with pytest.raises(AssertionError, match=r"(?s)README.md:3: the example prints other than.*\n-3\n\+2"):
        check_readme(path)


def test_check_readme_fails_where_an_example_raises(tmp_path):
    path = write(tmp_path, README.replace("print(1 + 1)", "print(1 / 0)"))
    with pytest.raises(AssertionError, match=r"(?s)README.md:3: the example exits with 1:.*ZeroDivisionError"):
        check_readme(path)


@pytest.mark.parametrize("text, count", [(README, 3), ("# Nothing to run\n\n```python\nprint(1)\n```\n", None)])
def test_check_readme_fails_where_examples_are_missing(tmp_path, text, count):
    with pytest.raises(AssertionError, match="python examples with an output block under them, expected"):
        check_readme(write(tmp_path, text), examples=count)


def test_a_conftest_of_two_lines_keeps_the_hub_offline_and_the_registry_fresh(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""
        from grpo_core.testing import fresh_registry_fixture, offline_hub

        offline_hub()
        fresh_registry = fresh_registry_fixture()
    """))
    (tmp_path / "test_kit.py").write_text(textwrap.dedent("""
        import os
        import sys

        from grpo_core.testing import get_registry

        SEEN = []

        def test_offline_before_the_hub_is_imported():
            assert os.environ["HF_HUB_OFFLINE"] == os.environ["HF_DATASETS_OFFLINE"] == "1"
            assert "huggingface_hub" not in sys.modules and "datasets" not in sys.modules

        def test_first():
            SEEN.append(get_registry())

        def test_second_gets_a_registry_of_its_own():
            assert get_registry() is not SEEN[0]
    """))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert "3 passed" in result.stdout, result.stdout + result.stderr
