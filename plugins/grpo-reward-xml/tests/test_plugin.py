"""The plugin as grpo-core sees it: grpo-core's property suite, discovery, parameters, and both completion shapes
through load_rewards."""

import json
import subprocess
import sys

import pytest

import grpo_reward_xml
from grpo_core import UsageError, load_rewards
from grpo_core.testing import get_spec, registered, reload_plugins
from grpo_reward_xml import SPEC

CLEAN_THINK = "<think>\nI add 2 and 2, which makes 4.\n</think>\n<answer>\n4\n</answer>"


@pytest.fixture
def only_this_plugin(monkeypatch):
    """A registry holding this plugin and grpo-core's built-ins, whatever else is installed."""
    monkeypatch.setenv("GRPO_LOAD_PLUGINS", "")
    with registered(grpo_reward_xml, distribution="grpo-reward-xml") as registry:
        yield registry


def test_property_suite(grpo_check):
    grpo_check(SPEC, max_examples=15)


def _call(reward, completions):
    logged = {}
    scores = reward(
        prompts=["What is 2 + 2?"] * len(completions),
        completions=completions,
        completion_ids=[[1, 2]] * len(completions),
        log_metric=lambda key, value: logged.__setitem__(key, value),
    )
    return scores, logged


def test_both_completion_shapes_score_the_same(only_this_plugin):
    [reward] = load_rewards(["xml-format"], {"xml-format": {"tags": "think,answer", "mode": "strict"}})
    texts = [CLEAN_THINK, "no tags", CLEAN_THINK + " trailing", ""]
    plain, logged = _call(reward, texts)
    chat, _ = _call(reward, [[{"role": "assistant", "content": t}] for t in texts])
    assert plain == chat == [1.0, 0.0, 0.0, 0.0]
    assert logged == {f"rewards/xml-format/{kind}": 0.0 for kind in ("errors", "timeouts", "unscorable")}
    assert reward.__name__ == "xml-format"


def test_defaults_are_incremental_reasoning_answer(only_this_plugin):
    [reward] = load_rewards(["xml-format"])
    assert reward.params == {"tags": "reasoning,answer", "mode": "incremental", "prefilled": False,
                             "penalize_trailing": True, "min_chars": 12, "min_answer_chars": 1}
    partial = "<reasoning>I add 2 and 2."  # what a small model writes before it learns the format
    scores, _ = _call(reward, [partial, [{"role": "assistant", "content": partial}], "4"])
    assert scores[0] == scores[1] > scores[2] == 0.0


def test_string_parameters_from_the_command_line(only_this_plugin):
    # As the command line passes them: every value is text.
    args = {"xml-format": {"tags": "think,answer", "prefilled": "true", "mode": "soft"}}
    [reward] = load_rewards(["xml-format"], args, {"xml-format": 0.5})
    assert reward.weight == 0.5
    scores, _ = _call(reward, ["Let me see what 2 and 2 make.</think> <answer>4</answer>", CLEAN_THINK])
    assert scores == [1.0, 0.0]  # with prefilled, writing <think> again is a duplicate


@pytest.mark.parametrize(
    "args, message",
    [
        ({"tags": ""}, "tags must name at least one element"),
        ({"tags": "<think>,answer"}, "tag name '<think>' contains '<'"),
        ({"tags": "answer,answer"}, "tag name 'answer' appears twice"),
        ({"tags": "think,,answer"}, "tags has an empty name"),
        ({"tags": "final answer"}, "tag name 'final answer' contains ' '"),
        ({"mode": "loose"}, "must be one of: incremental, soft, strict"),
        ({"prefilled": "maybe"}, "expects bool"),
        ({"tag": "think"}, "did you mean 'tags'"),
    ],
)
def test_bad_parameters_are_sentences_at_load_time(only_this_plugin, args, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        load_rewards(["xml-format"], {"xml-format": args})


def test_registered_through_the_entry_point(monkeypatch):
    monkeypatch.setenv("GRPO_LOAD_PLUGINS", "grpo-reward-xml")
    reload_plugins()  # conftest's fresh_registry loads every plugin again after the test
    spec = get_spec("reward", "xml-format")
    assert spec.distribution == "grpo-reward-xml"
    assert spec.func is grpo_reward_xml.xml_format_reward


def test_gold_scores_the_top_bound_through_the_adapter(only_this_plugin):
    spec = only_this_plugin.reward("xml-format")
    for args in ({}, {"tags": "think,answer", "prefilled": "true"}, {"tags": "think", "mode": "strict"}):
        params = spec.resolve(args)
        [reward] = load_rewards(["xml-format"], {"xml-format": args})
        scores, _ = _call(reward, [spec.checks.gold_example({}, params)])
        assert scores == [spec.bounds[1]]


def test_rows_need_no_columns(only_this_plugin):
    from hypothesis import find

    spec = only_this_plugin.reward("xml-format")
    assert spec.required_columns(spec.resolve()) == {}
    assert find(spec.checks.column_strategy(spec.resolve()), lambda row: True) == {}


def test_import_is_cheap():
    code = (
        "import sys, json, grpo_reward_xml; "
        "print(json.dumps(sorted(m for m in ('hypothesis', 'torch', 'transformers', 'trl', 'datasets', "
        "'sympy', 'math_verify', 'jsonschema') if m in sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(result.stdout) == []
