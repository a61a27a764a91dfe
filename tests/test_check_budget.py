"""grpo-run check --budget: a slow reward timed on its first calls and checked on as many examples as fit, the report
naming what was shortened or skipped for time, a progress line while it runs, and a fast reward checked as before."""

import io
import json
import os
import subprocess
import sys
import textwrap
import time

from click.testing import CliRunner

import checks_fixtures as fx
from checks_helpers import check, checks_environment  # noqa: F401
from grpo_core import Measure, Reward, RewardChecks, RewardSpec
from grpo_core.checks.progress import Progress
from grpo_core.checks.run import run_checks
from grpo_core.cli import cli

SLOW = textwrap.dedent("""
    import os
    import time

    def score(completion):
        time.sleep(float(os.environ["SLOW_S"]))
        with open(os.environ["SLOW_LOG"], "a") as log:
            log.write("scored\\n")
        return 0.0
""")


def _shown(report):
    return [(r.property, r.status, r.examples, r.message) for r in report.results]


def test_a_fast_reward_is_checked_on_the_same_examples_with_a_budget(checks_environment):
    without = check(fx.SOUND_ANSWER, max_examples=6, seed=0)
    within = check(fx.SOUND_ANSWER, max_examples=6, seed=0, budget_s=180.0)
    assert _shown(within) == _shown(without)
    assert within.unchecked() == without.unchecked()


def test_a_slow_reward_ends_within_its_budget_and_the_report_names_what_was_shortened(tmp_path):
    path = tmp_path / "slow.py"
    path.write_text(SLOW)
    log = tmp_path / "scored.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SLOW_S": "0", "SLOW_LOG": str(log)}
    # The completions a check without a budget scores: counted with no sleep, then priced at 0.5 s each.
    unbudgeted = CliRunner().invoke(cli, ["check", "--reward", f"{path}:score", "--seed", "0", "--json"], env=env)
    assert unbudgeted.exit_code == 0, unbudgeted.output
    scored = len(log.read_text().splitlines())
    assert scored > 300
    budget, per_item = 10.0, 0.5
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "grpo_core", "check", "--reward", f"{path}:score", "--seed", "0",
                             "--budget", str(budget), "--json"], capture_output=True, text=True, timeout=600,
                            env={**env, "SLOW_S": str(per_item)})
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stdout + result.stderr
    # Generous for a loaded machine: the start of the command, the first calls and one example in flight.
    assert elapsed < budget + 45 < scored * per_item / 3, f"took {elapsed:.1f} s with --budget {budget:g}"
    report, _ = json.JSONDecoder().raw_decode(result.stdout)
    shortened = [line for line in report["not_checked"] if "time budget (--budget)" in line]
    assert any("instead of 20, sized to the time budget" in line for line in shortened), report["not_checked"]
    assert any("0.5 s per completion" in line for line in shortened)
    assert "checking " in result.stderr  # a plain progress line: stderr is not a terminal


def _slow_zero(completion):
    time.sleep(0.2)
    return 0.0


def _big_measure(reward):
    reward.score(prompts=["q"] * 100, completions=["a"] * 100)
    return True, "scored 100"


def test_a_measure_that_cannot_finish_in_the_time_left_is_not_started(checks_environment):
    spec = RewardSpec("slow-measured", "0 after 0.2 s", _slow_zero,
                      checks=RewardChecks(measures=(Measure("big", _big_measure, items=100),)))
    started = time.monotonic()
    report = run_checks([Reward(spec, spec.resolve())], max_examples=20, seed=0, budget_s=4.0)
    assert time.monotonic() - started < 60
    big = report.result("slow-measured", "measured: big")
    assert big.status == "skip"
    assert "it scores about 100 completions" in big.message and "time budget (--budget)" in big.message


def _slow_none(completion):
    time.sleep(0.3)
    return None


def test_a_few_unscored_examples_left_by_the_budget_do_not_fail_output_as_a_reward_that_never_scores(
        checks_environment):
    spec = RewardSpec("slow-none", "None after 0.3 s", _slow_none)
    report = run_checks([Reward(spec, spec.resolve())], max_examples=20, seed=0, budget_s=4.0)
    output = report.result("slow-none", "output")
    assert output.status == "skip" and "too few to say it never scores" in output.message
    assert report.ok


def test_progress_names_the_reward_the_property_and_the_example_once_the_reward_is_timed_slow():
    stream = io.StringIO()
    progress = Progress(stream=stream, interval_s=0.02, budget_s=60)  # plain lines: quiet for a quick check
    progress.stage("judge", "bounds (2 of 9)", 5)
    progress.example(2)
    time.sleep(0.2)
    assert stream.getvalue() == ""
    progress.slow()
    time.sleep(0.2)
    progress.close()
    lines = stream.getvalue().splitlines()
    assert lines and lines[0].startswith("checking judge: bounds (2 of 9), example 3 of 5, ")
    assert "\r" not in stream.getvalue() and len(lines) == 1  # plain lines off a terminal: one per property


def test_a_budget_that_is_not_a_positive_number_exits_2_with_one_sentence():
    result = CliRunner().invoke(cli, ["check", "--budget", "-5"])
    assert result.exit_code == 2
    assert result.output.strip() == "Error: --budget takes a positive number of seconds, e.g. --budget 300; got -5"
