"""Right answers built from the row: each property finds the bug it is for, names it, and passes a careful reward.

The rewards here are TRL-style functions by path, checked on the arithmetic dataset as a user runs the check."""

import textwrap
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_helpers import invoke_json
from grpo_core import load_rewards
from grpo_core.answers.numbers import parse_plain_number
from grpo_core.checks.right_answers import near_misses
from grpo_core.checks.run import run_checks

REWARDS = textwrap.dedent(r'''
    import re
    from fractions import Fraction

    def _text(c):
        return c[0]["content"] if isinstance(c, list) else c

    def _last_tag(text):
        found = re.findall(r"<answer>(.*?)</answer>", text, re.S)
        return found[-1].strip() if found else None

    def _number(text):
        try:
            return Fraction(text.replace(",", ""))
        except (ValueError, ZeroDivisionError, AttributeError):
            return None

    def careful(completions, answer, **kwargs):
        """The last answer tag, compared as an exact number."""
        out = []
        for c, a in zip(completions, answer):
            got = _number(_last_tag(_text(c)) or "")
            out.append(1.0 if got is not None and got == _number(str(a)) else 0.0)
        return out

    def two_when_right(completions, answer, **kwargs):
        return [2.0 * s for s in careful(completions, answer)]

    def compares_text(completions, answer, **kwargs):
        return [1.0 if _last_tag(_text(c)) == str(a) else 0.0 for c, a in zip(completions, answer)]

    def compares_int_with_text(completions, answer, **kwargs):
        out = []
        for c, a in zip(completions, answer):
            got = _number(_last_tag(_text(c)) or "")
            out.append(1.0 if got is not None and int(got) == a else 0.0)  # a is text: never equal
        return out

    def five_percent(completions, answer, **kwargs):
        out = []
        for c, a in zip(completions, answer):
            got, gold = _number(_last_tag(_text(c)) or ""), _number(str(a))
            out.append(1.0 if got is not None and abs(got - gold) <= abs(gold) * Fraction(5, 100) + 1 else 0.0)
        return out

    def drops_sign(completions, answer, **kwargs):
        out = []
        for c, a in zip(completions, answer):
            got = _number((_last_tag(_text(c)) or "").lstrip("-"))
            out.append(1.0 if got is not None and got == _number(str(a)) else 0.0)
        return out

    def first_number_in_tag(completions, answer, **kwargs):
        out = []
        for c, a in zip(completions, answer):
            tag = _last_tag(_text(c)) or ""
            found = re.search(r"-?\d+", tag)
            out.append(1.0 if found and _number(found.group()) == _number(str(a)) else 0.0)
        return out

    def any_tag(completions, answer, **kwargs):
        out = []
        for c, a in zip(completions, answer):
            tags = re.findall(r"<answer>(.*?)</answer>", _text(c), re.S)
            out.append(1.0 if any(_number(t.strip()) == _number(str(a)) for t in tags) else 0.0)
        return out

    def pays_empty_tags(completions, **kwargs):
        return [1.0 if re.search(r"<think>.*?</think>\s*<answer>.*?</answer>", _text(c), re.S) else 0.0
                for c in completions]

    def format_careful(completions, **kwargs):
        return [1.0 if re.search(r"<think>\s*\S.*?</think>\s*<answer>\s*\S.*?</answer>", _text(c), re.S) else 0.0
                for c in completions]

    _cache = {}

    def cached_by_gold(completions, answer, **kwargs):
        out = []
        for c, a in zip(completions, answer):
            if a not in _cache:
                _cache[a] = careful([c], [a])[0]
            out.append(_cache[a])
        return out

    def overlong_penalty(completions, completion_ids, **kwargs):
        return [-min(1.0, max(0, len(ids) - 200) / 50) for ids in completion_ids]
    overlong_penalty.bounds = (-1, 0)

    def penalises_everything(completions, **kwargs):
        return [-0.5 for _ in completions]
    penalises_everything.bounds = (-1, 0)
''')

BUGS = {  # reward -> (property that must fail, words its message must hold)
    "two_when_right": ("pays-gold", "outside the declared bounds"),
    "compares_int_with_text": ("pays-gold", "never pays a right answer"),
    "compares_text": ("equivalent-forms", "with a trailing .0"),
    "five_percent": ("near-miss", "off by one"),
    "drops_sign": ("near-miss", "with its sign flipped"),
    "first_number_in_tag": ("one-answer", "two answers in one tag"),
    "any_tag": ("one-answer", "an answer tag or box for each of two answers"),
    "pays_empty_tags": ("empty-tags", "empty tags"),
    "cached_by_gold": ("state", "depends on earlier calls"),
    "penalises_everything": ("penalty", "a short completion"),
}
SOUND = ("careful", "format_careful", "overlong_penalty")


@pytest.fixture(scope="module")
def rewards(tmp_path_factory):
    path = tmp_path_factory.mktemp("rewards") / "planted.py"
    path.write_text(REWARDS)
    return path


def results(path, name: str) -> dict:
    code, report = invoke_json("check", "--reward", f"{path}:{name}", "--dataset", "arithmetic", "--max-examples", "5",
                          "--seed", "0", "--json")
    assert code in (0, 1), report
    return {r["property"]: r for r in report["results"]}


@pytest.mark.parametrize("name", BUGS)
def test_each_planted_bug_fails_the_property_that_names_it(rewards, name):
    prop, words = BUGS[name]
    found = results(rewards, name)
    assert found[prop]["status"] == "fail", (prop, found[prop])
    assert words in found[prop]["message"], found[prop]["message"]


@pytest.mark.parametrize("name", SOUND)
def test_a_careful_reward_passes_every_property(rewards, name):
    found = results(rewards, name)
    failed = {prop: r["message"] for prop, r in found.items() if r["status"] == "fail"}
    assert not failed, failed


def test_the_right_answer_properties_run_where_they_apply(rewards):
    careful = results(rewards, "careful")
    for prop in ("pays-gold", "equivalent-forms", "near-miss", "one-answer", "state"):
        assert careful[prop]["status"] == "pass", careful[prop]
    assert "penalty" not in careful  # not a penalty-only reward
    penalty = results(rewards, "overlong_penalty")
    assert penalty["penalty"]["status"] == "pass" and penalty["degenerate"]["status"] == "skip"
    assert "penalty-only" in penalty["degenerate"]["message"]
    assert "pays-gold" not in penalty  # it reads no answer


_DECIMALS = st.builds(lambda sign, whole, frac: f"{sign}{whole}{'.' + frac if frac is not None else ''}",
                      st.sampled_from(["", "-"]), st.integers(0, 10**30),
                      st.none() | st.text("0123456789", min_size=1, max_size=6))


@settings(max_examples=300)
@given(_DECIMALS)
def test_a_near_miss_is_never_the_right_answer_in_another_notation(gold):
    value = Fraction(gold)
    misses = dict(near_misses(gold))
    for label, text in misses.items():
        read = parse_plain_number(text)
        assert read is not None and read.value != value, (gold, label, text)
    assert Fraction(misses["off by a fraction"]) == value - Fraction(2, 5), misses
    assert Fraction(misses["off by one"]) == value + 1, misses


def test_a_sound_reward_passes_near_miss_on_a_large_decimal_answer():
    """A row the math reward's own strategy drew: its "off by a fraction" was once written -1e+11, the gold itself."""
    report = run_checks(load_rewards(["math"]), max_examples=2, seed=0,
                        rows=[{"prompt": "What is -10^11?", "answer": "-100000000000.0"}] * 3)
    found = {r.property: r for r in report.results}
    assert found["near-miss"].status == "pass", found["near-miss"].message
    assert found["near-miss"].examples >= 5, found["near-miss"]
