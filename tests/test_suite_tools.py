"""The scripts that measure the suite itself: where its time goes (JUnit reports of one or two phases) and how many
distinct assertions it makes at a commit."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"

REPORT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="3" time="{wall}">
<testcase classname="tests.test_slow" name="test_trains" time="{slow}"/>
<testcase classname="plugins.grpo-reward-code.tests.test_hostile" name="test_fork_bomb[none]" time="2.0">
<failure message="boom"/></testcase>
<testcase classname="tests.test_fast" name="test_quick" time="0.5"/>
</testsuite></testsuites>"""


def _script(name: str, *args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def test_two_phases_are_read_as_one_run_with_wall_and_test_time(tmp_path):
    (tmp_path / "workers.xml").write_text(REPORT.format(wall=30.0, slow=50.0))
    (tmp_path / "alone.xml").write_text(REPORT.format(wall=10.0, slow=7.5))
    result = _script("test_durations.py", str(tmp_path / "workers.xml"), str(tmp_path / "alone.xml"), "--top", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("6 tests (2 failed, 4 passed): 40 s of wall time, 62 s of the tests' own time")
    lines = result.stdout.splitlines()
    assert any(line.split()[:3] == ["tests/test_slow.py", "2", "58"] for line in lines), result.stdout
    assert not any(line.startswith("tests/test_fast.py") for line in lines), "past 80% of the time: not listed"
    assert "tests/test_slow.py::test_trains  50.0" in result.stdout
    assert "the 2 slowest take" in result.stdout


def _commit(repo: Path, text: str) -> None:
    (repo / "tests").mkdir(exist_ok=True)
    (repo / "tests" / "test_a.py").write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], cwd=repo, check=True)


def test_assertions_are_counted_once_each_and_a_lost_one_fails_the_comparison(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _commit(tmp_path, "import pytest\n\ndef test_one():\n    for x in (1, 2):\n        assert x > 0\n"
                      "    with pytest.raises(ValueError):\n        int('x')\n\ndef test_two():\n    assert 1 > 0\n"
                      "    assert 2 > 0\n")
    first = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    counted = _script("assertion_count.py", "--rev", first, cwd=tmp_path)
    assert counted.stdout.startswith("4 distinct assertions in 1 test files"), counted.stdout + counted.stderr
    # test_two merged into test_one: the same facts, the same count
    _commit(tmp_path, "import pytest\n\ndef test_one():\n    for x in (1, 2):\n        assert x > 0\n"
                      "    with pytest.raises(ValueError):\n        int('x')\n    assert 1 > 0\n    assert 2 > 0\n")
    assert _script("assertion_count.py", "--rev", first, "--compare", "HEAD", cwd=tmp_path).returncode == 0
    _commit(tmp_path, "def test_one():\n    assert 1 > 0\n")
    dropped = _script("assertion_count.py", "--rev", first, "--compare", "HEAD", cwd=tmp_path)
    assert dropped.returncode == 1
    assert "tests/test_a.py: 4 -> 1" in dropped.stdout and "4 -> 1 distinct assertions" in dropped.stdout


def test_the_hypothesis_profile_is_set_in_one_place_and_loaded_for_every_test():
    """The root conftest.py names the suite's profiles; no test file loads its own (a profile a plugin's conftest
    loaded applied to every test collected with it) or repeats the profile's deadline."""
    from hypothesis import settings

    assert settings.get_profile("suite").deadline is None and settings.default.max_examples in (80, 800)
    assert settings.get_profile("thorough").max_examples == 10 * settings.get_profile("suite").max_examples
    tests = [path for folder in ("tests", "plugins", "examples") for path in (ROOT / folder).rglob("*.py")
             if "tests" in path.parts and ".egg-info" not in str(path) and path != Path(__file__)]
    assert len(tests) > 100
    for path in tests:
        text = path.read_text()
        assert "settings.register_profile" not in text and "settings.load_profile" not in text, (
            f"{path}: a profile of its own")
        assert "deadline=None" not in text, f"{path}: the suite profile has no deadline already"


def test_a_report_that_is_not_there_is_named_in_one_line(tmp_path):
    result = _script("test_durations.py", str(tmp_path / "suite-alone.xml"))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"no report at {tmp_path / 'suite-alone.xml'}" in result.stderr
