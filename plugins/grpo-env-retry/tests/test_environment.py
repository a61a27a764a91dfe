"""retry's submit tool: right answers in any form the wrapped reward reads are accepted, wrong ones refused, guesses
bounded by the tries, junk answered with a message and never scored, and the pay decays with each wrong try."""

import math
import re

import pytest
from hypothesis import given, settings

from grpo_core import UsageError, load_dataset
from grpo_core.testing import HOSTILE_TEXTS, json_values

from grpo_env_retry import ENVIRONMENT, Retry, gold_episode
from grpo_env_retry.environment import ALREADY_RIGHT, NO_TRIES, NOT_CHECKED, RIGHT, parse_reward_args

QUESTION = [{"role": "system", "content": "Answer with the final number inside <answer></answer>."},
            {"role": "user", "content": "What is 20 + 22?"}]


def episode(answer="42", prompt=QUESTION, **params) -> Retry:
    retry = Retry(**params)
    retry.reset(prompt=prompt, answer=answer)
    return retry


@pytest.mark.parametrize("answer", [
    "42", 42, 42.0, " 42 ", "<answer>42</answer>", "So adding them, I get 42.", "The answer is 42", "\\boxed{42}",
    "$42$", "\\frac{84}{2}", "42.00", "x = 42",
])
def test_a_right_answer_in_any_form_the_reward_reads_is_accepted(answer):
    retry = episode()
    assert retry.submit(answer=answer) == RIGHT
    assert retry.get_reward() == 1.0


@pytest.mark.parametrize("answer", ["1/2", "\\frac{2}{4}", "<answer>\\frac{2}{4}</answer>", "0.5", "So I get 2/4.",
                                    "$\\frac{1}{2}$"])
def test_a_fraction_in_any_terms_is_accepted(answer):
    retry = episode("1/2", [{"role": "user", "content": "What is 1/4 + 1/4?"}])
    assert retry.submit(answer=answer) == RIGHT


@pytest.mark.parametrize("answer", [
    "41", "<answer>41</answer>", "So adding them, I get 41.", "41 or 42", "41, 42, 43", "The answer is not 42",
    "20 + 22", "22 + 20", "<answer>20 + 22</answer>", "forty-two", "\\frac{1}{4} + \\frac{1}{4}", "the answer",
])
def test_a_wrong_answer_is_refused_and_uses_a_try(answer):
    retry = episode()
    assert retry.submit(answer=answer) == "wrong: two tries left"
    assert retry.get_reward() == 0.0


def test_tries_decay_and_the_first_right_answer_counts():
    for wrong, pay in ((0, 1.0), (1, 0.5), (2, 0.25)):
        retry = episode()
        said = [retry.submit(answer="41") for _ in range(wrong)]
        assert said == ["wrong: two tries left", "wrong: one try left"][:wrong]
        assert retry.submit(answer="42") == RIGHT and retry.get_reward() == pay
        assert retry.submit(answer="41") == ALREADY_RIGHT and retry.submit(answer="42") == ALREADY_RIGHT
        assert retry.get_reward() == pay  # later submits change nothing
    retry = episode(tries=5, decay=0.9)
    for _ in range(3):
        retry.submit(answer="0")
    assert retry.submit(answer="42") == RIGHT and retry.get_reward() == pytest.approx(0.9 ** 3)
    retry = episode(decay=0.0)
    retry.submit(answer="41")
    assert retry.submit(answer="42") == RIGHT and retry.get_reward() == 0.0  # only a first try pays


def test_guesses_past_the_tries_are_refused_and_not_scored():
    retry = episode(tries=2)
    assert retry.submit(answer="40") == "wrong: one try left"
    assert retry.submit(answer="41") == "wrong: no tries left"
    scored = []
    retry._score = lambda completion: scored.append(completion)  # noqa: SLF001 - nothing is scored past the tries
    assert retry.submit(answer="42") == NO_TRIES and scored == []
    assert retry.get_reward() == 0.0


def test_an_episode_that_submits_nothing_earns_nothing():
    assert episode().get_reward() == 0.0


JUNK = [
    ("", "empty"), ("   \n", "empty"), (None, "must be text"), (True, "must be text"), ([42], "must be text"),
    ({"answer": 42}, "must be text"), (math.nan, "finite"), (math.inf, "finite"), (10 ** 5000, "longer than 1000"),
    ("4" * 1001, "longer than 1000"), (" " * 1_000_000 + "42", "longer than 1000"), ("4\x002", "control"),
    ("\ud800", "control"), ("\u202e24", "control"), ("What is 20 + 22?", "the question"),
    ("What is 20 + 22?\n<answer>42</answer>", "the question"),
]


@pytest.mark.parametrize("answer, says", JUNK, ids=[f"{i}-{type(a).__name__}" for i, (a, _) in enumerate(JUNK)])
def test_junk_is_answered_with_a_message_uses_no_try_and_is_never_scored(answer, says):
    retry = episode(tries=1)
    message = retry.submit(answer=answer)
    assert message.startswith("error: ") and says in message and len(message) < 200
    assert retry.submit(answer="42") == RIGHT  # the one try was left


@pytest.mark.parametrize("label, text", HOSTILE_TEXTS, ids=[label for label, _ in HOSTILE_TEXTS])
def test_hostile_texts_are_never_paid(label, text):
    retry = episode()
    assert isinstance(retry.submit(answer=text), str) and retry.get_reward() == 0.0


@settings(max_examples=200)
@given(json_values())
def test_any_json_argument_gives_text(value):
    retry = episode()
    assert isinstance(retry.submit(answer=value), str) and retry.get_reward() in (0.0, 1.0)


def test_the_messages_never_show_the_answer_or_the_score():
    for gold in ("42", "7", "1/2", "\\sqrt{2}"):
        retry = episode(gold, [{"role": "user", "content": "Compute it."}], tries=20)
        for guess in ("1", "2", "3", "0.5", "sqrt(2)", "x"):
            message = retry.submit(answer=guess)
            assert not re.search(r"\d", message) and gold not in message, message


def test_a_row_the_reward_cannot_score_is_unscored_not_zero():
    for gold in ("forty two", "", None):
        retry = episode(gold)
        assert retry.get_reward() is None  # no submit: the reward is asked whether it can score the row at all
        assert retry.submit(answer="42") == NOT_CHECKED and retry.get_reward() is None
    retry = episode("42")
    retry.submit(answer="\\boxed{9^{9^{9^{9}}}}")
    assert retry.get_reward() == 0.0


def test_reset_forgets_the_episode_before():
    retry = episode(tries=1)
    assert retry.submit(answer="42") == RIGHT
    retry.reset(prompt=[{"role": "user", "content": "What is 3 + 4?"}], answer="7")
    assert retry.get_reward() == 0.0 and retry.submit(answer="42") == "wrong: no tries left"
    retry.reset(prompt=[{"role": "user", "content": "What is 3 + 4?"}], answer="7")
    assert retry.submit(answer="7") == RIGHT and retry.get_reward() == 1.0


def test_reset_tells_the_rules_and_hides_the_row():
    text = Retry().reset(prompt=QUESTION, answer="42")
    assert text == ("\n\nCheck your final answer with the submit tool: you have 3 tries, and a right answer pays less "
                    "for each wrong try before it.")
    assert Retry(tries=1).reset(prompt=QUESTION, answer="42").endswith("you have one try.")


@pytest.mark.parametrize("params, says", [
    ({"reward": "no-such-reward"}, "retry cannot wrap reward 'no-such-reward': unknown reward 'no-such-reward'"),
    ({"reward_args": "extrct=answer-tag"}, "has no parameter 'extrct' (did you mean 'extract'?)"),
    ({"reward_args": "extract=anywhere"}, "must be one of: auto, answer-tag, boxed, last-number; got 'anywhere'"),
    ({"reward_args": "extract"}, "KEY=VALUE pairs joined by commas"),
    ({"tries": 0}, "tries must be a whole number from 1 to 20; got 0"),
    ({"decay": 1.5}, "decay must be a number from 0 to 1"),
])
def test_bad_parameters_are_usage_errors_naming_the_value(params, says):
    with pytest.raises(UsageError, match=re.escape(says)):
        Retry(**params)


def test_the_spec_bounds_each_parameter():
    for values, says in (({"tries": "0"}, "between 1 and 20; got 0"), ({"tries": "21"}, "got 21"),
                         ({"decay": "-0.1"}, "between 0 and 1; got -0.1"), ({"tries": "three"}, "expects int")):
        with pytest.raises(UsageError, match=re.escape(says)):
            ENVIRONMENT.resolve(values)


def test_reward_args_reach_the_wrapped_reward():
    assert parse_reward_args("extract=answer-tag, allow_expressions=false,") == {
        "extract": "answer-tag", "allow_expressions": "false"}
    literal = episode("1/2", [{"role": "user", "content": "What is 1/4 + 1/4?"}], reward_args="allow_expressions=false")
    assert literal.submit(answer="2/4") == "wrong: two tries left" and literal.submit(answer="0.5") == RIGHT
    tagged = episode(reward_args="extract=answer-tag")  # the tag only: a bare answer is read inside the tag
    assert tagged.submit(answer="So I get 42.") == "wrong: two tries left" and tagged.submit(answer="42") == RIGHT


def test_a_missing_column_is_a_usage_error_naming_it():
    with pytest.raises(UsageError, match="reads the column 'answer'"):
        Retry().reset(prompt=QUESTION, solution="42")


def test_the_gold_episode_is_right_on_every_arithmetic_row():
    params = ENVIRONMENT.resolve({})
    for difficulty in ("easy", "medium", "hard"):
        for row in load_dataset("arithmetic", {"size": 100, "difficulty": difficulty}):
            retry = Retry(**params)
            retry.reset(**row)
            ((tool, args),) = gold_episode(dict(row), params)
            assert getattr(retry, tool)(**args) == RIGHT and retry.get_reward() == 1.0


def test_wrapping_reasoning_gym_reads_a_bare_answer_inside_its_tag():
    pytest.importorskip("grpo_reasoning_gym")
    params = ENVIRONMENT.resolve({"reward": "reasoning-gym"})
    for row in [dict(row) for row in load_dataset("reasoning-gym", {"size": 10, "tasks": "chain_sum"})]:
        retry = Retry(**params)
        retry.reset(**row)
        assert retry.submit(answer=f"{row['answer']} ") == RIGHT, row["answer"]  # bare: read inside <answer></answer>
        ((tool, args),) = gold_episode(row, params)
        retry.reset(**row)
        assert getattr(retry, tool)(**args) == RIGHT


def right_forms(gold: int, question: str) -> list[str]:
    """A right answer as a model may submit it: bare, in the reward's own tag, in prose, as an unreduced fraction (not
    the question's own: math refuses \\frac{6}{2} for 'What is 6 ÷ 2?' as the question copied)."""
    k = next(k for k in range(2, 100) if str(k * gold) not in question)
    return [str(gold), f"<answer>{gold}</answer>", f"Working it out step by step, I get {gold}.",
            f"\\frac{{{k * gold}}}{{{k}}}"]


def wrong_forms(gold: int, question: str) -> list[str]:
    """Answers that are not right: off by one (bare, tagged, prose), numbers sprayed, the question's expression."""
    off = gold + 1
    forms = [str(off), f"<answer>{off}</answer>", f"Working it out step by step, I get {off}.",
             f"{gold - 1}, {gold}, {gold + 1}", f"{gold} or {off}", f"The answer is not {gold}."]
    expression = re.fullmatch(r"What is (.+)\?", question)
    return forms + ([expression.group(1)] if expression else [])


def verdicts(rows: list[dict], forms) -> list[str]:
    said = []
    for row in rows:
        for answer in forms(row):
            retry = Retry(tries=1)
            retry.reset(**row)
            said.append(retry.submit(answer=answer))
    return said


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_on_arithmetic_every_right_form_is_accepted_and_every_wrong_one_refused(difficulty):
    rows = [dict(row) for row in load_dataset("arithmetic", {"size": 200, "difficulty": difficulty, "split": "test"})]
    question = lambda row: row["prompt"][-1]["content"]  # noqa: E731
    accepted = verdicts(rows, lambda row: right_forms(int(row["answer"]), question(row)))
    refused = verdicts(rows, lambda row: wrong_forms(int(row["answer"]), question(row)))
    assert accepted.count(RIGHT) == len(accepted) == 4 * len(rows)
    assert refused.count("wrong: no tries left") == len(refused) >= 6 * len(rows)


def test_the_wrapped_rewards_time_limit_is_the_tools():
    assert episode(seconds=0.5)._reward.params["timeout"] == 0.5  # math's own 5 s lowered to the tool's
    assert episode(seconds=30)._reward.params["timeout"] == 5.0  # never raised above the reward's own
    assert episode(reward_args="timeout=3")._reward.params["timeout"] == 3.0  # reward_args wins


def test_an_answer_not_judged_in_time_is_not_checked_uses_no_try_and_is_not_asked_again(monkeypatch):
    retry = episode(answer="9")
    asked = []
    monkeypatch.setattr(retry, "_score", lambda completion: asked.append(completion))  # None: as a timeout gives
    assert retry.submit("9") == NOT_CHECKED
    assert asked == ["9"]  # not asked again inside the tag: one answer costs at most one time limit
    monkeypatch.undo()
    assert retry.submit("9") == RIGHT and retry.get_reward() == 1.0  # the answer not judged used no try


@pytest.mark.parametrize("seconds", [0, -1, 61, float("nan"), True, "2"])
def test_seconds_out_of_range_is_refused_naming_it(seconds):
    with pytest.raises(UsageError, match="retry seconds must be a number from 0.1 to 60"):
        Retry(seconds=seconds)
