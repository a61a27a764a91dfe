"""The property checks catch each classic reward bug, name the property, and pass sound rewards."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time

import checks_fixtures as fx
import pytest
from click.testing import CliRunner

from grpo_core import Reward, RewardError, hookimpl
from grpo_core.checks.report import format_report
from grpo_core.checks.results import PropertyResult
from grpo_core.checks.run import preflight, run_checks
from grpo_core.checks.subject import Item, RewardUnderTest
from grpo_core.plugins import get_registry, registered
from grpo_core.testing import HOSTILE_TEXTS, call_reward, check_reward

from checks_helpers import FAST, check, checks_environment  # noqa: F401  (the fixture, used by name)

pytestmark = pytest.mark.usefixtures("checks_environment")



def failed(report, spec):
    """The properties ``spec`` failed, leaving out degenerate: most of these one-bug rewards also pay padding,
    which tests/test_degenerate.py covers."""
    return [prop for prop in report.failed(spec.name) if prop != "degenerate"]


# --- each classic bug is caught, under the right property ---------------------------------


def test_wrong_sign_fails_its_direction_with_a_shrunk_counterexample():
    report = check(fx.WRONG_SIGN)
    direction = "direction: a completion closer to the target length scores at least as high"
    assert failed(report, fx.WRONG_SIGN) == [direction]
    result = report.result("wrong-sign", direction)
    assert result.message.startswith(
        "direction violated: a completion closer to the target length scores at least as high; better="
    )
    better, worse = result.counterexample["completions"]
    b, w = result.counterexample["scores"]
    assert abs(len(better) - 20) <= abs(len(worse) - 20) and b < w
    assert f"better={better!r} scored {b!r} < worse={worse!r} scored {w!r}" in result.message
    assert len(better) + len(worse) <= 3  # shrunk: hypothesis draws lengths up to 60


def test_score_outside_the_bounds_fails_bounds():
    report = check(fx.OUT_OF_BOUNDS)
    assert failed(report, fx.OUT_OF_BOUNDS) == ["bounds", "hostile"]  # hostile texts are scored 1.5 too
    result = report.result("out-of-bounds", "bounds")
    assert "inside the declared bounds [0, 1]" in result.message and "scored 1.5" in result.message
    assert result.counterexample["scores"] == [1.5]


def test_hostile_text_scored_outside_the_bounds_fails_hostile():
    report = check(fx.LONG_TEXT_OVER_BOUND)
    assert failed(report, fx.LONG_TEXT_OVER_BOUND) == ["hostile"]
    message = report.result("long-over-bound", "hostile").message
    assert "outside the declared bounds (0.0, 1000.0)" in message and "4,096 characters of one letter" in message


def test_non_finite_score_fails_bounds():
    report = check(fx.NAN)
    assert failed(report, fx.NAN) == ["bounds"]
    assert "returned nan for ''" in report.result("nan-when-empty", "bounds").message


def test_undeclared_batch_normalisation_fails_batch_independence():
    report = check(fx.BATCH_NORMALISED)
    assert failed(report, fx.BATCH_NORMALISED) == ["batch-independent"]
    message = report.result("batch-normalised", "batch-independent").message
    assert re.search(r"scored [\d.]+ alone but [\d.]+ in a batch of \d", message)
    assert "group_relative=True" in message


def test_declared_group_relative_reward_is_not_held_to_batch_independence():
    report = check(fx.GROUP_RELATIVE)
    assert failed(report, fx.GROUP_RELATIVE) == [], format_report(report)
    assert report.result("group-relative", "batch-independent").status == "skip"


def test_crash_on_chat_shaped_input_fails_shapes():
    report = check(fx.CHAT_CRASH)
    assert failed(report, fx.CHAT_CRASH) == ["shapes"]
    result = report.result("chat-crash", "shapes")
    assert "chat-shaped input raised AttributeError: 'list' object has no attribute 'strip'" in result.message
    assert result.counterexample["shape"] == "chat"


def test_crash_on_hostile_text_fails_hostile():
    report = check(fx.SURROGATE_CRASH)
    assert failed(report, fx.SURROGATE_CRASH) == ["hostile"]
    message = report.result("surrogate-crash", "hostile").message
    assert "UnicodeEncodeError" in message and "surrogate" in message


def test_hanging_reward_fails_time_quickly_and_runs_on_until_it_hangs_again():
    started = time.monotonic()
    report = check(fx.SLEEPER, item_timeout_s=1.0)
    elapsed = time.monotonic() - started
    assert failed(report, fx.SLEEPER) == ["time"]
    assert elapsed < 20, f"took {elapsed:.1f} s; the reward sleeps 60 s"
    assert "no score" in report.result("sleeper", "time").message
    messages = [r.message for r in report.results if r.property != "time"]
    hangs = [i for i, m in enumerate(messages) if m.startswith("interrupted: the reward hung")]
    assert len(hangs) == 2, messages  # the first hang killed its worker; the properties after it ran, to a second
    assert report.result("sleeper", "bounds").status == "pass"  # between the two: it scores text without tags
    assert all(m.startswith("not run: the reward hung") or "declares no" in m for m in messages[hangs[1] + 1:])


def test_runaway_regex_that_holds_the_gil_is_stopped():
    started = time.monotonic()
    report = check(fx.BACKTRACKER, item_timeout_s=1.0)
    assert failed(report, fx.BACKTRACKER) == ["time"]
    assert time.monotonic() - started < 30
    assert "4,096 characters of one letter" in report.result("backtracker", "time").counterexample["input"]


def test_batched_reward_returning_one_value_too_few_fails_output():
    report = check(fx.ONE_TOO_FEW)
    assert failed(report, fx.ONE_TOO_FEW) == ["output"]
    assert re.search(r"returned (\d+) values? for (\d+) completions?", report.result("one-too-few", "output").message)


def test_an_item_error_the_direct_call_does_not_repeat_is_named_plainly(tmp_path, monkeypatch):
    """One item of a batch failed in the Reward callable and succeeds when called again (a flaky server): the
    report says so in a sentence that reads after 'it raised'."""
    monkeypatch.setenv("GRPO_TEST_FAILS_ONCE", str(tmp_path / "failed"))
    subject = RewardUnderTest(Reward(fx.FAILS_ONCE, fx.FAILS_ONCE.resolve()), vary_params=False)
    subject.warmed = True  # the call below is the first: no warm-up call before it to spend the one failure
    items = [Item("a", {}), Item("b", {})]
    outcome = subject.call(0, items)
    assert outcome.errors == 1 and outcome.raised is None and outcome.scores[1] == 0.5
    try:
        [problem] = subject.diagnose(0, items, "plain", outcome)
    finally:
        subject.close()
    assert (problem.kind, problem.index) == ("raised", None)
    assert f"it raised {problem.detail}" == ("it raised an error inside the Reward callable, but not when called "
                                             "again on the same input")


def test_random_reward_fails_determinism():
    report = check(fx.RANDOM)
    assert failed(report, fx.RANDOM) == ["deterministic"]
    result = report.result("random", "deterministic")
    first, second = result.counterexample["scores"], result.counterexample["second_scores"]
    assert first != second


def test_gold_completion_below_the_top_bound_fails_gold():
    report = check(fx.BAD_GOLD)
    assert failed(report, fx.BAD_GOLD) == ["gold", "equivalent-forms"]  # its exact comparison refuses 12.0 too
    result = report.result("bad-gold", "gold")
    assert "the gold completion 'The answer is \\\\boxed{" in result.message and "scored 0.0" in result.message


def test_sound_reward_passes_every_property_it_declares():
    report = check(fx.SOUND_ANSWER)
    assert report.ok, format_report(report)
    statuses = {r.property: r.status for r in report.results}
    assert statuses["gold"] == statuses["direction: the right answer beats a wrong one"] == "pass"
    assert all(status == "pass" for prop, status in statuses.items() if prop != "rows")
    assert "empty-tags" not in statuses  # it pays no tags: nothing to hold empty ones to
    assert statuses["rows"] == "skip" and "declares no row_problems" in report.result("sound-answer", "rows").message


@pytest.mark.parametrize("name", ["length", "math", "xml-format", "json-schema"])
def test_shipped_rewards_pass_at_their_defaults(name):
    if name not in get_registry().items["rewards"]:
        pytest.skip(f"reward '{name}' is not installed")
    report = check_reward(name, max_examples=5, seed=0)
    assert report.ok
    assert {"output", "bounds", "deterministic", "shapes", "hostile", "time"} <= {r.property for r in report.results}


# --- parameters, the adapter, timing -----------------------------------------------------


def test_parameters_are_drawn_beyond_the_defaults_and_named_in_the_counterexample():
    report = check(fx.MODE_CRASH)
    assert failed(report, fx.MODE_CRASH)[0] == "output"  # hostile text (an empty string) finds it too
    result = report.result("mode-crash", "output")
    assert "ZeroDivisionError" in result.message and result.counterexample["params"] == {"mode": "strict"}
    fixed = run_checks([Reward(fx.MODE_CRASH, fx.MODE_CRASH.resolve())], vary_params=False, **FAST)
    assert failed(fixed, fx.MODE_CRASH) == [], format_report(fixed)
    chosen = run_checks([Reward(fx.WRONG_SIGN, fx.WRONG_SIGN.resolve({"target": 7}))], vary_params=False, **FAST)
    assert chosen.failures[0].counterexample["params"] == {"target": 7}


def test_rewards_run_through_the_trl_adapter_with_both_prompt_shapes():
    # The chat-crash reward only fails when the prompt is a list of messages, which only the adapter passes on.
    assert call_reward(fx.CHAT_CRASH, ["hello there"], prompts=["hello"]) == [1.0]
    with pytest.raises(RewardError):
        call_reward(fx.CHAT_CRASH, [[{"role": "assistant", "content": "hi"}]], prompts=[[{"role": "user", "content": "hi"}]])


def test_budget_caps_the_run_and_reports_what_ran():
    started = time.monotonic()
    report = run_checks([Reward(fx.SOUND_ANSWER, fx.SOUND_ANSWER.resolve())], max_examples=10_000, seed=0, budget_s=3.0)
    assert time.monotonic() - started < 8
    assert report.ok
    assert any("time budget" in r.message for r in report.results)


def test_hostile_texts_cover_what_the_promise_lists():
    labels = " ".join(label for label, _ in HOSTILE_TEXTS)
    for kind in ("empty", "1 MB", "control characters", "surrogate", "unbalanced tags", "10,000-deep JSON", "power tower"):
        assert kind in labels
    assert any(len(text) >= 1_000_000 for _, text in HOSTILE_TEXTS)


# --- preflight on real rows ----------------------------------------------------------------


def test_preflight_passes_sound_rewards_on_real_rows_within_its_budget():
    rows = [{"prompt": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(30)]
    rewards = [Reward(fx.SOUND_ANSWER, fx.SOUND_ANSWER.resolve())]
    started = time.monotonic()
    report = preflight(rewards, rows, budget_s=5.0)
    assert time.monotonic() - started < 10
    assert report.ok, format_report(report)
    assert report.result("sound-answer", "gold").examples > 0


def test_preflight_names_a_column_the_dataset_lacks_and_how_to_map_it():
    report = preflight([Reward(fx.SOUND_ANSWER, fx.SOUND_ANSWER.resolve())], [{"prompt": "p", "solution": "4"}])
    assert not report.ok
    message = report.result("sound-answer", "columns").message
    assert "no column 'answer'" in message and "--reward-arg sound-answer.answer_column=COLUMN" in message
    mapped = Reward(fx.SOUND_ANSWER, fx.SOUND_ANSWER.resolve({"answer_column": "solution"}))
    assert preflight([mapped], [{"prompt": "p", "solution": str(i)} for i in range(5)]).ok


def test_preflight_catches_a_gold_mismatch_on_real_rows():
    rows = [{"prompt": "q", "answer": "12"}]
    report = preflight([Reward(fx.BAD_GOLD, fx.BAD_GOLD.resolve())], rows)
    assert report.failed("bad-gold") == ["gold", "equivalent-forms"]
    assert report.result("bad-gold", "gold").counterexample["columns"] == [{"answer": "12"}]


# --- report ------------------------------------------------------------------------------


def test_report_as_table_and_json():
    report = run_checks([Reward(fx.OUT_OF_BOUNDS, fx.OUT_OF_BOUNDS.resolve()),
                         Reward(fx.SOUND_ANSWER, fx.SOUND_ANSWER.resolve())], **FAST)
    text = format_report(report)
    assert "out-of-bounds" in text and "sound-answer" in text
    assert re.search(r"bounds\s+│\s+FAIL\s+│\s+pass", text)
    assert "out-of-bounds / bounds" in text and "counterexample:" in text and "scores: [1.5]" in text
    assert f"seed {report.seed}" in text
    data = json.loads(report.to_json())
    assert data["ok"] is False and data["seed"] == 0
    bounds = [r for r in data["results"] if r["reward"] == "out-of-bounds" and r["property"] == "bounds"][0]
    assert bounds["status"] == "fail" and bounds["counterexample"]["scores"] == [1.5]


def test_report_survives_surrogates_and_huge_texts():
    report = check(fx.SURROGATE_CRASH)
    text = format_report(report)
    text.encode("utf-8")  # printable on a UTF-8 terminal
    json.loads(report.to_json())
    assert all(len(c) < 2000 for r in report.results if r.counterexample for c in r.counterexample["completions"])


# --- check_reward, the pytest plugin and the command ---------------------------------------


def test_check_reward_raises_with_the_report_and_returns_it_on_success():
    with pytest.raises(AssertionError) as caught:
        check_reward(fx.OUT_OF_BOUNDS, max_examples=4, seed=0)
    assert "bounds violated" in str(caught.value) and "out-of-bounds" in str(caught.value)
    assert check_reward(fx.SOUND_ANSWER, max_examples=4, seed=0).ok


def test_pytest_plugin_is_registered_and_gives_third_party_tests_the_suite(tmp_path):
    from importlib.metadata import entry_points

    assert any(ep.value == "grpo_core.pytest_plugin" for ep in entry_points(group="pytest11"))
    (tmp_path / "test_third_party.py").write_text(textwrap.dedent("""
        from grpo_core import RewardSpec

        def half(completion):
            return 0.5

        def too_big(completion):
            return 2.0

        def test_good(grpo_check):
            assert grpo_check(RewardSpec("half", "always 0.5", half)).ok

        def test_bad(grpo_check):
            grpo_check(RewardSpec("too-big", "always 2", too_big))
    """))
    result = subprocess.run(
        # Its own basetemp: a nested session must not clean up the outer session's numbered temp folders.
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "basetemp"),
         "--grpo-max-examples", "3", "--grpo-seed", "0", str(tmp_path / "test_third_party.py")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert "1 failed, 1 passed" in result.stdout, result.stdout + result.stderr
    assert "bounds violated" in result.stdout and "too-big" in result.stdout


def test_light_modules_do_not_import_hypothesis():
    code = ("import sys, grpo_core.checks.command, grpo_core.pytest_plugin, grpo_core.checks, grpo_core.testing\n"
            "print(sorted(m for m in ('hypothesis', 'torch', 'trl') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


class _Plugin:
    @hookimpl
    def register_rewards(self, register):
        register(fx.OUT_OF_BOUNDS)
        register(fx.SOUND_ANSWER)


def _invoke(*args):
    from grpo_core.checks.command import check as command

    return CliRunner().invoke(command, list(args))


def test_check_command_passes_and_fails_with_the_right_exit_code():
    with registered(_Plugin()):
        good = _invoke("--reward", "sound-answer", "--max-examples", "3", "--seed", "0")
        bad = _invoke("--reward", "out-of-bounds=2.0", "--reward", "sound-answer", "--max-examples", "3", "--seed", "0")
    assert good.exit_code == 0, good.output
    assert "sound-answer" in good.output and "0 failed" in good.output
    assert bad.exit_code == 1
    assert "out-of-bounds / bounds" in bad.output and "bounds violated" in bad.output


def test_check_command_json_and_reward_args():
    with registered(_Plugin()):
        result = _invoke("--reward", "sound-answer", "--reward-arg", "sound-answer.answer_column=answer",
                         "--max-examples", "3", "--seed", "5", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["seed"] == 5 and data["params"]["sound-answer"] == {"answer_column": "answer"}
    assert {r["reward"] for r in data["results"]} == {"sound-answer"}


@pytest.mark.parametrize("args, message", [
    (["--reward", "no-such-reward"], "unknown reward 'no-such-reward'"),
    (["--reward", "sound-answer", "--reward-arg", "sound-answer.colour=red"], "has no parameter 'colour'"),
    (["--reward-arg", "nodot=1"], "is not of the form NAME.KEY=VALUE"),
])
def test_check_command_bad_input_exits_2_with_one_line(args, message):
    with registered(_Plugin()):
        result = _invoke(*args)
    assert result.exit_code == 2
    assert result.output.startswith("Error: ") and message in result.output


def test_check_command_defaults_to_every_installed_reward():
    with registered(_Plugin()):
        names = sorted(get_registry().items["rewards"])
        only_fixtures = {name: spec for name, spec in get_registry().items["rewards"].items()
                         if name in ("out-of-bounds", "sound-answer")}
        get_registry().items["rewards"] = only_fixtures  # keep the test fast: just the two fixtures
        result = _invoke("--max-examples", "3", "--seed", "0", "--json")
    assert {"out-of-bounds", "sound-answer"} <= set(names)
    assert result.exit_code == 1
    assert {r["reward"] for r in json.loads(result.output)["results"]} == {"out-of-bounds", "sound-answer"}


def test_check_is_a_grpo_run_command_and_help_stays_light():
    code = textwrap.dedent("""
        import sys
        from click.testing import CliRunner
        from grpo_core.cli import cli
        top = CliRunner().invoke(cli, ["--help"])
        light = "hypothesis" not in sys.modules
        sub = CliRunner().invoke(cli, ["check", "--help"])
        print(top.exit_code, light, sub.exit_code, "--max-examples" in sub.output)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "True", "0", "True"]


def test_property_result_round_trips_through_json():
    result = PropertyResult("r", "bounds", "fail", "m", {"scores": [float("nan")]}, 3, 0.5)
    assert json.loads(json.dumps(result.to_dict()))["counterexample"]["scores"] == ["nan"]


def test_a_first_call_that_pays_for_an_import_is_not_a_hang():
    """The first call sleeps 3 s (an import inside the function, as of torch): a warm-up call pays it, and time
    passes with a 1 s limit per item."""
    report = check(fx.SLOW_FIRST_CALL, item_timeout_s=1.0)
    assert report.result("slow-first-call", "time").status == "pass", report.result("slow-first-call", "time").message
