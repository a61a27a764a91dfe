"""The math reward end to end: both tiers, bad input, threads, safety and the TRL adapter."""

import os
import threading

import pytest

from grpo_core import Unscored
from grpo_reward_math import SPEC, math_reward


def scores_of(completions, golds, **params):
    """The reward's scores as TRL sees them: an Unscored item is its stand-in score (None unless set)."""
    return [_value(v) for v in math_reward(completions, golds, **params)]


def _value(value):
    return value.score if isinstance(value, Unscored) else value


def score(completion, gold, **params):
    return scores_of([completion], [gold], **params)[0]


@pytest.mark.parametrize(
    "completion, gold",
    [
        ("<answer>1,234</answer>", "1234"),
        ("<answer>$5</answer>", "5"),
        ("<answer>50%</answer>", "50"),
        ("<answer>3/4</answer>", "0.75"),
        ("<answer>-2.5</answer>", "-2.5"),
        ("<answer>1e3</answer>", "1000"),
        ("<answer>12 apples.</answer>", "12"),
        ("Natalia sold 24 in May, so 48 + 24 = 72 clips. The answer is 72.", "72"),
        ("<answer>72</answer>", "Natalia sold 24.\n#### 72"),
        ("<answer>The answer is 42.</answer>", "42"),
        ("so the total is 5.", "5"),  # the last sentence states one value
    ],
)
def test_numeric_answers_right(completion, gold):
    assert score(completion, gold) == 1.0


@pytest.mark.parametrize(
    "completion, gold",
    [
        ("<answer>1,235</answer>", "1234"),
        ("<answer>-5</answer>", "5"),
        ("<answer>12 apples.</answer>", "13"),
        ("<answer>5x</answer>", "5"),
        ("<answer>50%</answer>", "0.5"),  # a percent sign is a label: 50% is 50
        ("so the total is 5 and then 6", "5"),  # a number in prose that the last sentence does not state
        ("<answer></answer>", "5"),
        ("I do not know.", "5"),
        ("<answer>5</answer> is wrong, it is 6", "6"),  # the tag wins over later text
    ],
)
def test_numeric_answers_wrong_or_missing(completion, gold):
    assert score(completion, gold) == 0.0


@pytest.mark.parametrize(
    "completion, gold",
    [
        ("\\boxed{\\frac{1}{2}}", "0.5"),
        ("\\boxed{0.5}", "\\frac{1}{2}"),
        ("The answer is $\\boxed{\\sqrt{2}/2}$.", "\\frac{\\sqrt 2}{2}"),
        ("\\boxed{\\frac{\\sqrt{2}}{2}}", "\\sqrt{2}/2"),
        ("\\boxed{(1, 2]}", "(1,2]"),
        ("<answer>[0, \\infty)</answer>", "[0, \\infty)"),
        ("\\boxed{\\{3, 1, 2\\}}", "\\{1, 2, 3\\}"),
        ("\\boxed{(x+1)^2}", "x^2 + 2x + 1"),
        ("\\boxed{\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}}", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}"),
        ("So $x = \\frac{3}{4}$ in the end.", "0.75"),
        ("<answer>2\\sqrt{3}</answer>", "\\sqrt{12}"),
    ],
)
def test_symbolic_equivalences(completion, gold):
    assert score(completion, gold) == 1.0


@pytest.mark.parametrize(
    "completion, gold",
    [
        ("\\boxed{[1, 2]}", "(1, 2]"),
        ("\\boxed{\\{1, 2\\}}", "\\{1, 2, 3\\}"),
        ("\\boxed{\\frac{1}{3}}", "\\frac{1}{2}"),
        ("\\boxed{\\sqrt{2}}", "\\frac{\\sqrt 2}{2}"),
        ("\\boxed{(x-1)^2}", "x^2 + 2x + 1"),
    ],
)
def test_symbolic_differences(completion, gold):
    assert score(completion, gold) == 0.0


@pytest.mark.parametrize("gold", ["", "   ", None, "#### ", float("nan"), "\\frac{", "\\begin{", "forty two", "seven", "Evelyn"])
def test_unreadable_gold_is_unscorable(gold):
    (value,) = math_reward(["<answer>5</answer>"], [gold])
    assert isinstance(value, Unscored) and value.reason == "unscorable", value


def test_extract_modes():
    text = "I think 3. <answer>4</answer> and $\\boxed{5}$ then 6"
    assert [score(text, g) for g in "3456"] == [0.0, 0.0, 0.0, 0.0]  # two final answers, 4 and 5: neither pays
    assert [score(text, g, extract="answer-tag") for g in "3456"] == [0.0, 1.0, 0.0, 0.0]
    assert [score(text.replace("5", "4"), g) for g in "3456"] == [0.0, 1.0, 0.0, 0.0]
    assert [score(text, g, extract="boxed") for g in "3456"] == [0.0, 0.0, 1.0, 0.0]
    assert [score(text, g, extract="last-number") for g in "3456"] == [0.0, 0.0, 0.0, 0.0]  # and a tag and a box
    assert [score("I think 3. So 4 and 5, then 6", g, extract="last-number") for g in "3456"] == [0.0, 0.0, 0.0, 1.0]
    assert score("the answer is 4", "4", extract="answer-tag") == 0.0
    assert score("the answer is 4", "4", extract="boxed") == 0.0
    assert score("<result>4</result>", "4", tag="result", extract="answer-tag") == 1.0
    assert score("<answer>4</answer>", "4", tag="result", extract="answer-tag") == 0.0


def test_auto_falls_back_in_order():
    assert score("$\\boxed{7}$ and then 8", "7") == 1.0  # the box, never a later bare number
    assert score("So it is $\\frac{1}{2}$.", "0.5") == 1.0  # the last math block
    assert score("<answer>7", "7") == 0.0  # an unclosed tag is no tag, and a bare 7 is no final answer
    assert score("We get \\boxed{200} first. Final Answer: The final answer is $10,455$.", "10455") == 1.0
    assert score("The answer is \\boxed{5}. Checking: 2 + 3 = 5, not 6", "5") == 1.0


HOSTILE = [
    "",
    " \n\t ",
    "x" * 1_000_000,
    "7 " * 500_000,
    "\ud800\udfff answer \x00\x1b\x7f",
    "<answer><answer></answer></think><answer>",
    "<answer>" * 100_000,
    "{" * 100_000 + "}" * 99_999,
    "\\boxed{" * 50_000,
    "9" * 100_000,
    "<answer>" + "9" * 100_000 + "</answer>",
    "<answer>1e999999</answer>",
    "<answer>1e" + "9" * 5000 + "</answer>",
    "10" + "0" * 10_000,
    "\\boxed{10^{10^{10}}}",
    "\\boxed{9^{9^{9^{9}}}}",
    "$\\int_0^{10^{10}} x^{x^{x^x}} dx$",
    "\\boxed{" + "\\frac{1}{" * 300 + "2" + "}" * 300 + "}",
]


@pytest.mark.parametrize("gold", ["5", "\\frac{1}{2}"])
def test_hostile_completions_score_within_bounds(gold):
    scores = scores_of(HOSTILE, [gold] * len(HOSTILE), timeout=0.5)
    assert len(scores) == len(HOSTILE)
    for completion, value in zip(HOSTILE, scores):
        assert value in (0.0, 1.0, None), completion[:80]
    assert scores[0] == scores[1] == 0.0  # empty and whitespace are missing answers


def test_huge_numbers_are_compared_exactly():
    digits = "9" * 100_000
    assert score(f"<answer>{digits}</answer>", digits) == 1.0
    assert score(f"<answer>{digits[:-1]}8</answer>", digits) == 0.0
    assert score("The answer is " + digits, digits) == 1.0
    assert score("The answer is " + digits[:-1] + "8", digits) == 0.0


def test_latex_power_tower_times_out_as_wrong():
    (timed_out,) = math_reward(["\\boxed{9^{9^{9^{9}}}}"], ["\\sqrt{5}"], timeout=0.5)
    assert timed_out.reason == "timeout" and timed_out.score == 0.0
    # With a plain-number gold, a power tower is no way to write the number: wrong at once, nothing to time out.
    assert math_reward(["\\boxed{9^{9^{9^{9}}}}"], ["5"], timeout=0.5) == [0.0]


def test_gold_bomb_does_not_hang():
    (value,) = math_reward(["<answer>5</answer>"], ["10^{10^{10}}"], timeout=0.5)
    assert value == 0.0 or isinstance(value, Unscored)


def test_timeout_works_off_the_main_thread():
    results = {}

    def target():
        results["scores"] = math_reward(
            ["\\boxed{9^{9^{9^{9}}}}", "<answer>5</answer>", "\\boxed{\\frac{10}{2}}"],
            ["\\sqrt{5}", "5", "5"],
            timeout=0.5,
        )

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive()
    tower, plain, expression = results["scores"]
    assert isinstance(tower, Unscored) and tower.reason == "timeout" and tower.score == 0.0
    assert (plain, expression) == (1.0, 1.0)


PWNED = "/tmp/grpo_math_pwned"


@pytest.mark.parametrize(
    "completion",
    [
        f"__import__('os').system('touch {PWNED}')",
        f"<answer>__import__('os').system('touch {PWNED}')</answer>",
        f"\\boxed{{__import__('os').system('touch {PWNED}')}}",
        f"$__import__('os').system('touch {PWNED}')$",
        f"The answer is (lambda: __import__('os').system('touch {PWNED}'))()",
    ],
)
@pytest.mark.parametrize("gold", ["0", "\\frac{1}{2}", f"__import__('os').system('touch {PWNED}')"])
def test_model_text_is_never_run_as_code(completion, gold):
    if os.path.exists(PWNED):
        os.remove(PWNED)
    value = score(completion, gold)
    # A gold answer that is itself this text may be matched as text; it is never run.
    assert value in (0.0, None) or completion.strip("<>/answr$\\boxed{}") == gold
    assert not os.path.exists(PWNED)


def test_one_bad_item_does_not_fail_the_batch():
    class Weird:
        def __str__(self):
            raise RuntimeError("cannot print me")

    scores = math_reward(["<answer>5</answer>", "<answer>5</answer>"], [Weird(), "5"])
    assert scores[0].reason == "error" and scores[0].score is None and "cannot print me" in scores[0].detail
    assert scores[1] == 1.0


def test_batch_scores_match_single_scores():
    completions = ["<answer>5</answer>", "\\boxed{\\frac{1}{2}}", "nothing", "so 12", "\\boxed{(1,2]}"]
    golds = ["5", "0.5", "3", "12", "(1, 2]"]
    assert scores_of(completions, golds) == [score(c, g) for c, g in zip(completions, golds)]


def test_both_completion_shapes_through_load_rewards():
    from grpo_core import load_rewards

    (reward,) = load_rewards(["math"], {"math": {"timeout": 3}})
    assert reward.__name__ == "math"
    texts = ["<answer>72</answer>", "\\boxed{\\frac{1}{2}}", "I think 71", "<answer>x</answer>"]
    golds = ["72", "0.5", "72", ""]
    plain = reward.score(prompts=["q"] * 4, completions=texts, answer=golds)
    chat = reward.score(
        prompts=[[{"role": "user", "content": "q"}]] * 4,
        completions=[[{"role": "assistant", "content": t}] for t in texts],
        answer=golds,
    )
    assert plain == chat == [1.0, 1.0, 0.0, None]


def test_answer_column_remaps_the_gold_column():
    from grpo_core import load_rewards

    (reward,) = load_rewards(["math"], {"math": {"answer_column": "solution"}})
    assert reward.score(prompts=["q"], completions=["<answer>3</answer>"], solution=["3"]) == [1.0]


@pytest.mark.parametrize(
    "args, word",
    [({"timeout": 0}, "timeout"), ({"tag": "<answer>"}, "tag"), ({"extract": "first"}, "extract")],
)
def test_bad_parameters_are_refused_with_the_value(args, word):
    from grpo_core import UsageError

    with pytest.raises(UsageError, match=word):
        SPEC.resolve(args)
