"""The generic audit's attacks on rewards that declare nothing: number sprays, the gold among other numbers,
content-free text in a format's tags, blank-rendering and near-repeated text; ``--dataset`` rows; unsafe values."""

from __future__ import annotations

import json

import audit_fixtures as fx
import degenerate_fixtures as dfx
import pytest
from click.testing import CliRunner

from grpo_core import Reward, hookimpl
from grpo_core.checks.command import check as command
from grpo_core.checks.run import preflight
from grpo_core.checks.subject import param_variants
from grpo_core.plugins import get_registry, registered
from grpo_core.testing import check_reward

from checks_helpers import check, checks_environment  # noqa: F401  (the fixture, used by name)

pytestmark = pytest.mark.usefixtures("checks_environment")
SUMS = [{"prompt": f"What is {a} + {b}? Put the number inside <answer></answer>.", "answer": str(a + b)}
        for a, b in [(4, 18), (7, 8), (30, 12), (5, 9), (61, 70)]]
BIG = [{"prompt": f"What is {a} * {b}?", "answer": str(a * b)} for a, b in [(37, 41), (52, 29), (88, 17)]]


def arithmetic_rows(n: int = 20) -> list[dict]:
    if "arithmetic" not in get_registry().items["datasets"]:
        pytest.skip("dataset 'arithmetic' is not installed")
    from grpo_core.checks.run import dataset_rows
    from grpo_core.plugins.loading import load_dataset

    return dataset_rows(load_dataset("arithmetic", {"size": n}))


class _Plugin:
    @hookimpl
    def register_rewards(self, register):
        for spec in (fx.CONTAINS_GOLD, fx.ANSWER_LENGTH, fx.TAG_ANSWER, dfx.READS_GOLD):
            register(spec)


def _invoke(*args):
    with registered(_Plugin()):
        return CliRunner().invoke(command, [*args, "--max-examples", "4", "--seed", "0"])


def _paid(report, name) -> str:
    """The degenerate finding's message and every completion it names as paid."""
    result = report.result(name, "degenerate")
    return result.message + " " + " ".join((result.counterexample or {}).get("also paid", []))


# --- the two third-party rewards of the issue --------------------------------------------------


def test_check_command_fails_a_reward_paying_the_gold_anywhere_on_the_datasets_rows():
    arithmetic_rows(1)
    result = _invoke("--reward", "contains-gold", "--dataset", "arithmetic", "--dataset-arg", "size=20")
    assert result.exit_code == 1, result.output
    assert "contains-gold / degenerate" in result.output
    assert "every integer from 0 to 199 in prose, '0 1 2 3 4 5 6 7 8 9 10" in result.output
    assert "scored 1.0, above 0.5" in result.output


def test_check_command_fails_a_reward_paying_the_gold_anywhere_without_a_dataset():
    result = _invoke("--reward", "contains-gold", "--json")
    assert result.exit_code == 1, result.output
    failed = [r for r in json.loads(result.output)["results"] if r["status"] == "fail"]
    finding = failed[0]  # first in the report; the right-answer properties see the same bug after it
    assert finding["property"] == "degenerate" and "scored 1.0" in finding["message"]
    assert "every integer from 0 to 199" in finding["message"] or "buried among" in finding["message"]


def test_check_command_fails_a_reward_paying_the_answer_tags_length():
    result = _invoke("--reward", "answer-length")
    assert result.exit_code == 1, result.output
    assert ("<answer> filled with 40 characters of one letter, '<answer>xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "</answer>', scored 1.0, above 0.5") in result.output


@pytest.mark.parametrize("spec, words", [
    (fx.CONTAINS_GOLD, "every integer from 0 to 199 in prose"),
    (fx.ANSWER_LENGTH, "<answer> filled with 40 characters of one letter"),
])
def test_check_reward_with_real_rows_fails_both(spec, words):
    with pytest.raises(AssertionError, match="scored 1.0") as caught:
        check_reward(spec, rows=arithmetic_rows(), max_examples=4, seed=0)
    assert words in str(caught.value)


def test_preflight_stops_both_on_real_rows():
    rows = arithmetic_rows()
    report = preflight([Reward(s, s.resolve()) for s in (fx.CONTAINS_GOLD, fx.ANSWER_LENGTH)], rows)
    assert report.failed("contains-gold")[0] == report.failed("answer-length")[0] == "degenerate"


# --- each attack, a reward that pays it ------------------------------------------------------


@pytest.mark.parametrize("spec, rows, words", [
    (fx.ANY_IN_TAG, SUMS, ["every integer from 0 to 199 in the answer tag"]),
    (fx.ANY_BOXED, SUMS, ["every integer from 0 to 199 each in \\boxed{}"]),
    (fx.CONTAINS_GOLD, BIG, ["the gold '1517' buried among 120 other numbers in prose"]),
    (fx.ANSWER_LENGTH, None, ["<answer> filled with 40 characters of underscores",
                              "<answer> filled with 40 characters of Hangul filler characters"]),
    (fx.VISIBLE_LENGTH, None, ["Hangul filler characters (U+3164 and kin) to 200 characters",
                               "zero-width characters to 200 characters", "200 distinct private-use characters",
                               "one word repeated to 200 characters, the end changed",
                               "a sentence repeated 5 times, its last letter changed each time"]),
])
def test_a_reward_paying_an_attack_fails_naming_it(spec, rows, words):
    report = check(spec, rows=rows, max_examples=6)
    assert report.failed(spec.name)[0] == "degenerate"  # the right-answer properties may name the same bug after it
    paid = _paid(report, spec.name)
    assert all(w in paid for w in words), paid


@pytest.mark.parametrize("rows", [SUMS, BIG])
def test_a_reward_taking_the_last_box_fails_on_two_boxed_answers(rows):
    report = check(fx.LAST_BOXED, rows=rows, max_examples=6)
    assert report.failed("last-boxed")[0] == "degenerate"
    result = report.result("last-boxed", "degenerate")
    assert "two boxed answers, a wrong one then the gold" in result.message, result.message
    assert "scored 1.0" in result.message


def test_the_math_reward_passes_the_two_boxed_answers():
    if "math" not in get_registry().items["rewards"]:
        pytest.skip("reward 'math' is not installed")
    from grpo_core.checks.degenerate import attacks

    spec = get_registry().reward("math")
    hedges = [(text, control) for label, text, control in attacks("What is 4 + 18?", {"answer": "22"})
              if label.startswith("two boxed answers")]
    assert hedges and all("\\boxed{22}" in text for text, _ in hedges)
    scores = spec.func([t for t, _ in hedges], ["22"] * len(hedges))
    assert scores == [0.0] * len(hedges)
    report = check(spec, rows=SUMS)
    assert report.ok, report.result("math", "degenerate").message


# --- no false alarms --------------------------------------------------------------------------


@pytest.mark.parametrize("rows", [None, SUMS, BIG])
def test_a_reward_paying_the_gold_in_the_answer_tag_passes(rows):
    report = check(fx.TAG_ANSWER, rows=rows)
    assert report.ok, report.result("tag-answer", "degenerate").message


def test_a_format_reward_is_not_failed_for_a_spray_in_its_tag():
    # It pays any visible answer, so a spray in the tag earns what one wrong number there earns: that is the task.
    report = check(fx.ANSWER_GIVEN, rows=SUMS)
    assert report.ok, report.result("answer-given", "degenerate").message


# --- unsafe parameter values ------------------------------------------------------------------


def test_an_unsafe_value_is_never_explored():
    variants = param_variants(Reward(fx.GUARDED, fx.GUARDED.resolve()))
    assert [v.params["guard"] for v in variants] == []
    report = check(fx.GUARDED)
    assert report.params["guarded"] == {"guard": "on"}


def test_the_code_reward_never_explores_sandbox_none():
    if "code" not in get_registry().items["rewards"]:
        pytest.skip("reward 'code' is not installed")
    spec = get_registry().reward("code")
    try:
        bound = Reward(spec, spec.resolve())
    except Exception as error:  # no bubblewrap on this machine
        pytest.skip(str(error))
    assert "none" in next(p for p in spec.params if p.name == "sandbox").unsafe
    assert all(v.params["sandbox"] != "none" for v in param_variants(bound))


# --- --dataset ------------------------------------------------------------------------------------


def test_check_command_checks_on_a_datasets_rows(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"q{i}", "answer": a}) + "\n" for i, a in enumerate(["seven", "1", "2"])))
    result = _invoke("--reward", "reads-gold", "--dataset", "local", "--dataset-arg", f"path={data}", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["warnings"] == [
        "reward 'reads-gold': gold answer cannot be read in 1 of 3 rows (33.3%), e.g. 'seven'"]


def test_check_command_on_a_dataset_leaves_out_the_rewards_it_cannot_feed(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"prompt": "q", "solution": "1"}) + "\n")
    with registered(_Plugin()):
        get_registry().items["rewards"] = {"answer-length": fx.ANSWER_LENGTH, "tag-answer": fx.TAG_ANSWER}
        result = CliRunner().invoke(command, ["--dataset", "local", "--dataset-arg", f"path={data}", "--json",
                                              "--max-examples", "2", "--seed", "0"])
    skipped = [r for r in json.loads(result.output)["results"] if r["property"] == "columns"]
    assert [(r["reward"], r["status"]) for r in skipped] == [("tag-answer", "skip")]
    assert "not checked on dataset 'local': reward 'tag-answer' needs the column 'answer'" in skipped[0]["message"]


def test_dataset_args_need_a_dataset():
    result = _invoke("--reward", "tag-answer", "--dataset-arg", "size=3")
    assert result.exit_code == 2 and "--dataset-arg needs --dataset NAME" in result.output


@pytest.mark.parametrize("gold", ["0.0", "199.00", "10.0", "0", "199", "10", "+10", "1e1", "10.", "1.99e2"])
def test_a_spray_never_starts_or_ends_with_the_gold_nor_controls_with_it_in_any_notation(gold):
    """A reward that reads the first (or last) number is right to pay "0, 1, ..., 199" for 0.0: the spray's order
    would be the finding, not the reward. And a control equal to the gold would hide a spray that pays."""
    import re
    from fractions import Fraction

    from grpo_core.checks.degenerate import spray_attacks

    value = Fraction(gold)
    for label, text, control in spray_attacks(inside=[gold]):
        numbers = re.findall(r"-?\d+(?:\.\d+)?", text)
        assert Fraction(numbers[0]) != value and Fraction(numbers[-1]) != value, (label, numbers[:2], numbers[-2:])
        assert value not in {Fraction(n) for n in re.findall(r"-?\d+(?:\.\d+)?", control)}, (label, control)
