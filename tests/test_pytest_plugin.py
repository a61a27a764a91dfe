"""The grpo_check fixture fails a test with the checks' report, shown once."""

import subprocess
import sys
import textwrap


def test_grpo_check_reports_a_failure_once(tmp_path):
    (tmp_path / "test_third_party.py").write_text(textwrap.dedent("""
        from grpo_core import RewardSpec

        def too_big(completion):
            return 2.0

        def test_bad(grpo_check):
            grpo_check(RewardSpec("too-big", "always 2", too_big))
    """))
    result = subprocess.run(
        # -rN: no short summary, which repeats the message in full when CI is set
        [sys.executable, "-m", "pytest", "-q", "-rN", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "basetemp"),
         "--grpo-max-examples", "3", "--grpo-seed", "0", str(tmp_path / "test_third_party.py")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert "1 failed" in result.stdout, result.stdout + result.stderr
    assert result.stdout.count("too-big / bounds") == 1, result.stdout  # the report, not a second copy
    assert "During handling of the above exception" not in result.stdout
