"""The degenerate audit: a reward that pays a completion skipping the task fails, with that completion shown;
the report says in words what was not checked; row_problems become warnings; the kit builds the completions."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import degenerate_fixtures as fx
import pytest
from click.testing import CliRunner

from grpo_core import Reward, hookimpl
from grpo_core.checks.report import format_report, preflight_summary
from grpo_core.checks.run import preflight
from grpo_core.plugins import registered
from grpo_core.testing import (
    ZERO_WIDTH_SPACE,
    check_reward,
    copied_prompt,
    generic_degenerate,
    padded,
    placeholders,
    prompt_numbers,
    repeated,
)

from checks_helpers import check, checks_environment  # noqa: F401  (the fixture, used by name)

pytestmark = pytest.mark.usefixtures("checks_environment")
SUMS = [{"prompt": f"What is {a} + {b}?", "answer": str(a + b)} for a, b in [(4, 18), (7, 8), (30, 12), (5, 9)]]



# --- what fails ------------------------------------------------------------------------------


def test_a_reward_paying_everything_fails_on_the_empty_completion():
    report = check(fx.PAYS_EVERYTHING)
    assert report.failed("pays-everything") == ["degenerate"]
    result = report.result("pays-everything", "degenerate")
    assert "empty, '', scored 1.0, above 0.5" in result.message
    assert "0.5 of the way from the low bound 0 to the high bound 1" in result.message
    assert "whitespace only (1.0)" in result.message  # the others it paid are named too
    assert result.counterexample["input"] == "empty" and result.counterexample["threshold"] == 0.5


def test_with_an_unbounded_top_a_constant_reward_fails_against_the_best_real_completion():
    report = check(fx.PAYS_EVERYTHING_UNBOUNDED)
    assert report.failed("pays-everything-unbounded") == ["degenerate"]
    message = report.result("pays-everything-unbounded", "degenerate").message
    assert "at or above that best score" in message and "is far above anything the reward paid" in message


def test_paying_exactly_the_share_is_allowed_and_share_one_opts_out_in_words():
    assert check(fx.HALF).result("half", "degenerate").status == "pass"
    report = check(fx.OPTED_OUT)
    assert report.result("opted-out", "degenerate").status == "skip"
    assert any(line.startswith("opted-out / degenerate: not checked, the reward sets degenerate_share=1")
               for line in report.unchecked())


def test_the_undeclared_wrong_sign_length_reward_fails_on_padding():
    report = check(fx.WRONG_SIGN_UNDECLARED)
    assert report.failed("wrong-sign-undeclared") == ["degenerate"]
    result = report.result("wrong-sign-undeclared", "degenerate")
    score = result.counterexample["scores"][0]
    best = result.counterexample["best real score"]
    assert score >= best and score > 100  # padding pays more than any real text
    assert "spaces to 1,000 characters (" in result.message  # padding is among the completions it paid
    assert "the declared high bound 1e+06 is far above anything the reward paid" in result.message


def test_a_reward_that_ignores_the_answer_fails_on_the_copied_prompt():
    report = check(fx.IGNORES_ANSWER)
    # the same bug seen from the right answer: a wrong one in its place, or beside it, is paid as much
    assert report.failed("ignores-answer") == ["degenerate", "near-miss", "one-answer"]
    result = report.result("ignores-answer", "degenerate")
    assert result.counterexample["input"] == "the prompt copied back"
    (copied,) = result.counterexample["completions"]
    assert re.fullmatch(r"What is \d+ \+ \d+\?", copied)
    assert f"the prompt copied back, {copied!r}, scored 1.0, above 0.5" in result.message
    # On a run's real rows too, with their prompts.
    real = preflight([Reward(fx.IGNORES_ANSWER, fx.IGNORES_ANSWER.resolve())], SUMS)
    assert real.failed("ignores-answer") == ["degenerate", "near-miss", "one-answer"]
    assert real.result("ignores-answer", "degenerate").counterexample["completions"][0] in [r["prompt"] for r in SUMS]


def test_declared_degenerate_completions_catch_an_evaluated_copy_and_pass_an_exact_reward():
    bad = check(fx.EVALUATES)
    assert bad.failed("evaluates-answer") == ["degenerate", "time"]  # eval() hangs on a power tower in the tag too
    result = bad.result("evaluates-answer", "degenerate")
    assert result.counterexample["input"].startswith("an expression from the prompt")
    assert re.fullmatch(r"<answer>\d+ \+ \d+</answer>", result.counterexample["completions"][0])
    good = check(fx.EXACT)
    assert good.result("exact-answer", "degenerate").status == "pass", format_report(good)
    assert "only the generic ones" not in good.result("exact-answer", "degenerate").message


@pytest.mark.parametrize("spec, words", [
    (fx.DEGENERATE_RAISES, "degenerate() raised KeyError: 'solution'"),
    (fx.DEGENERATE_NOT_PAIRS, "degenerate() must return a list of (label, completion) pairs, got the item 'just a string'"),
])
def test_a_broken_degenerate_callable_fails_with_what_it_did(spec, words):
    report = check(spec)
    assert report.failed(spec.name) == ["degenerate"]
    assert words in report.result(spec.name, "degenerate").message


def test_check_reward_message_shows_the_completion_its_label_score_and_threshold():
    with pytest.raises(AssertionError) as caught:
        check_reward(fx.PAYS_EVERYTHING, max_examples=4, seed=0)
    message = str(caught.value)
    assert "pays-everything / degenerate" in message and "empty, '', scored 1.0, above 0.5" in message
    assert "pays-everything / direction: not checked, the reward declares none; declare one like this: " \
           "checks=RewardChecks(directions=(Direction(" in message


def test_preflight_audit_is_quick_for_a_cheap_reward():
    report = preflight([Reward(fx.EXACT, fx.EXACT.resolve())], SUMS * 50)
    result = report.result("exact-answer", "degenerate")
    assert result.status == "pass" and result.examples > 0
    # A share of the 10 s preflight budget; the rows' completions go to the reward in one batch per row.
    assert result.seconds < 2.0


# --- the report says what was not checked ----------------------------------------------------


def test_report_says_in_words_what_was_not_checked_and_how_to_declare_it():
    report = check(fx.HALF)
    lines = report.unchecked()
    assert any(line.startswith('half / direction: not checked, the reward declares none; declare one like this: '
                               'checks=RewardChecks(directions=(Direction("') for line in lines)
    assert any(line.startswith("half / gold: not checked, the reward declares none; declare one like this: "
                          "checks=RewardChecks(gold_example=")
               for line in lines)
    assert "half / degenerate: checked only with the generic completions (empty, whitespace, the prompt copied " \
           "back, padding, repetition, number sprays, the gold among other numbers, blank-rendering characters, " \
           "near-repeats, content-free text in tags): the reward declares none of its own; declare them like this: " \
           "checks=RewardChecks(degenerate=" \
           in "\n".join(lines)
    text = format_report(report)
    assert "not checked, or checked only in part:" in text and "2 not checked, 1 checked only in part" in text
    assert json.loads(report.to_json())["not_checked"] == lines


def test_report_says_when_a_reward_reads_columns_without_a_column_strategy():
    report = check(fx.SURVEY_RAISES)
    assert report.result("survey-raises", "rows").status == "skip"
    assert any("survey-raises / rows: not checked, the reward declares no column_strategy, so the checks drew "
               "its columns (answer) as random text; declare one like this: checks=RewardChecks(column_strategy=" in line for line in report.unchecked())


def test_preflight_summary_names_what_held_and_what_was_not_checked():
    report = preflight([Reward(fx.HALF, fx.HALF.resolve())], [{"prompt": "p"}])
    lines = preflight_summary(report, 1)
    assert lines[0] == ("preflight: half: no property failed on 1 dataset row (a quick check: grpo-run check runs "
                        "the full suite); not checked or only in part:")
    assert any("half / direction: not checked, the reward declares none" in line for line in lines[1:])


# --- row problems are warnings ---------------------------------------------------------------


def test_preflight_groups_row_problems_into_a_warning_and_goes_on():
    rows = [{"prompt": "q", "answer": a} for a in ["forty two", "seven", "3", "4", "5", "6", "7", "8", "9", "10"]]
    report = preflight([Reward(fx.READS_GOLD, fx.READS_GOLD.resolve())], rows)
    assert report.ok
    assert report.result("reads-gold", "rows").status == "warn"
    expected = "reward 'reads-gold': gold answer cannot be read in 2 of 10 rows (20.0%), e.g. 'forty two', 'seven'"
    assert report.warnings() == [expected]
    assert f"warnings:\n  {expected}" in format_report(report)
    assert json.loads(report.to_json())["warnings"] == [expected]
    assert f"preflight: warning: {expected}" in preflight_summary(report, len(rows))


def test_a_row_problems_callable_that_raises_is_a_grouped_warning():
    rows = [{"prompt": "q", "answer": a} for a in ["1", "boom", "boom"]]
    report = preflight([Reward(fx.SURVEY_RAISES, fx.SURVEY_RAISES.resolve())], rows)
    assert report.ok
    assert report.warnings() == ["reward 'survey-raises': row_problems() raised ValueError in 2 of 3 rows (66.7%), "
                                 "e.g. \"cannot parse 'boom'\""]


class _Plugin:
    @hookimpl
    def register_rewards(self, register):
        register(fx.READS_GOLD)


def test_check_command_warns_about_row_problems_in_generated_rows():
    from grpo_core.checks.command import check as command

    with registered(_Plugin()):
        result = CliRunner().invoke(command, ["--reward", "reads-gold", "--max-examples", "4", "--seed", "0", "--json"])
    assert result.exit_code == 0, result.output
    (warning,) = json.loads(result.output)["warnings"]
    assert re.fullmatch(r"reward 'reads-gold': gold answer cannot be read in \d+ of \d+ rows \([\d.]+%\), e\.g\. .*"
                        r"'(seven|forty two)'.*", warning)


@pytest.mark.slow
def test_training_preflight_prints_what_was_checked_and_the_row_warnings(tmp_path):
    from grpo_core.cli import cli

    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"q{i}", "answer": a}) + "\n"
                            for i, a in enumerate(["seven", "1", "2", "3"])))
    with registered(_Plugin()):
        result = CliRunner().invoke(cli, [
            "--reward", "reads-gold", "--dataset", "local", "--dataset-arg", f"path={data}", "--model", "tiny-random",
            "--max-steps", "1", "--output-dir", str(tmp_path / "out"), "--set", "num_generations=2",
            "--set", "per_device_train_batch_size=2", "--set", "max_completion_length=4", "--set", "report_to=none",
        ])
    assert result.exit_code == 0, result.output
    assert "rewards passed" not in result.output
    assert "preflight: reads-gold: no property failed on 4 dataset rows" in result.output
    assert ("preflight: warning: reward 'reads-gold': gold answer cannot be read in 1 of 4 rows (25.0%), e.g. 'seven'"
            in result.output)


# --- the kit ----------------------------------------------------------------------------------


def test_prompt_numbers_copies_expressions_and_numbers_into_the_template():
    pairs = prompt_numbers("What is 4 + 18?", "<answer>{}</answer>")
    assert [text for _, text in pairs] == ["<answer>4 + 18</answer>", "<answer>4</answer>", "<answer>18</answer>"]
    assert [text for _, text in prompt_numbers("What is 7 \\times 8?")] == ["7 \\times 8", "7", "8"]
    assert [text for _, text in prompt_numbers("Compute 8 ÷ 4 + 45.")][0] == "8 ÷ 4 + 45"
    assert [text for _, text in prompt_numbers("What is (9+1)?")][0] == "(9+1)"
    assert [text for _, text in prompt_numbers("What is 0 + 7?", exclude=["7"])] == ["0 + 7", "0"]


def test_copied_prompt_placeholders_padding_and_repetition():
    assert copied_prompt("Find x.\nWhat is {x}?", "<answer>{}</answer>") == [
        ("the prompt copied back", "<answer>Find x.\nWhat is {x}?</answer>"),
        ("the prompt's last line copied back", "<answer>What is {x}?</answer>"),
    ]
    assert copied_prompt("   ") == []
    texts = dict((label, text) for label, text in placeholders(("reasoning", "answer")))
    assert texts["the tag structure with '.' in each tag"] == "<reasoning>.</reasoning>\n<answer>.</answer>"
    assert texts["the tag structure with a zero-width space in each tag"].count(ZERO_WIDTH_SPACE) == 2
    assert [len(text) for _, text in padded("42", 200)] == [200, 200, 200]
    assert all(text.startswith("42") for _, text in padded("42", 200))
    loops = repeated("the answer is", 100)
    assert [len(text) for _, text in loops] == [100, 100, 100]
    assert loops[1][1].startswith("the the the") and set(loops[2][1]) == {"t"}


def test_generic_set_has_the_promised_kinds():
    labels = " ".join(label for label, _ in generic_degenerate("What is 1 + 1?"))
    for kind in ("empty", "whitespace only", "the prompt copied back", "spaces to 1,000", "repeated"):
        assert kind in labels
    assert all("1" not in text for label, text in generic_degenerate("") if "prompt" not in label)


def test_the_kit_is_light_to_import():
    code = "import sys, grpo_core.checks.degenerate; print('hypothesis' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_the_copied_prompt_of_a_chat_row_is_its_question_not_its_worked_example():
    from grpo_core.checks.inputs import prompt_of

    row = {"prompt": [
        {"role": "system", "content": "Answer inside <answer></answer>."},
        {"role": "user", "content": "What is 9 + 10?"},
        {"role": "assistant", "content": "<answer>19</answer>"},
        {"role": "user", "content": "What is 4 + 18?"},
    ]}
    assert prompt_of(row) == "What is 4 + 18?"
    assert prompt_of({"prompt": "What is 4 + 18?"}) == "What is 4 + 18?"
