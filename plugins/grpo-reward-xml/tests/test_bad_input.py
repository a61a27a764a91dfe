"""Hostile completions: no crash and a float inside [0, 1] in every mode."""

import random

import pytest

from grpo_reward_xml import gold_completion, xml_format_reward

CLEAN = gold_completion()


def _unbalanced(size, seed=0):
    rng = random.Random(seed)
    pieces = ["<reasoning>", "</reasoning>", "<answer>", "</answer>", "<", ">", "x", "\n"]
    return "".join(rng.choices(pieces, k=size // 4))[:size]


HOSTILE = {
    "empty": "",
    "spaces": "   ",
    "whitespace mix": " \n\t\r\x0b\x0c\u2003\u3000",
    "one megabyte of text": "a" * 1_000_000,
    "one megabyte of unbalanced tags": _unbalanced(1_000_000),
    "one megabyte after a clean structure": CLEAN + "z" * 1_000_000,
    "one megabyte inside the answer": CLEAN.replace("42", "4" * 1_000_000),
    "lone surrogates": "<reasoning>\ud800\udfff</reasoning><answer>\udc00</answer>",
    "surrogates in tags": "<reason\ud800ing>a</reasoning>",
    "control characters": "<reasoning>\x00\x01\x1b[31m\x7f</reasoning>\x00<answer>\x08</answer>\x00",
    "nul in tag": "<reasoning\x00>a</reasoning>",
    "only openings": "<reasoning><answer>" * 100,
    "only closings": "</answer></reasoning>" * 100,
    "nested": "<reasoning><reasoning><answer>1</answer></reasoning></reasoning>",
    "ten thousand nested tags": "<reasoning>" * 10_000 + "x" + "</reasoning>" * 10_000,
    "ten thousand nested pairs": "<reasoning><answer>" * 10_000 + "</answer></reasoning>" * 10_000,
    "attributes": '<reasoning type="x">a</reasoning><answer id=1>4</answer>',
    "odd casing": "<REASONING>a</Reasoning><Answer>4</ANSWER>",
    "self-closing": "<reasoning/><answer/>",
    "spaces in tags": "< reasoning >a</ reasoning ><answer >4</answer >",
    "brackets everywhere": "<<<<>>>><</>" * 1000,
    "tag lookalikes": "<reasoning<answer>>a</reasoning</answer>>",
    "emoji and right-to-left": "<reasoning>\U0001F600\u202e</reasoning><answer>\u05d0</answer>",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("prefilled", [False, True])
@pytest.mark.parametrize("mode", ["incremental", "soft", "strict"])
def test_hostile_completion_scores_inside_the_bounds(name, mode, prefilled):
    value = xml_format_reward(HOSTILE[name], mode=mode, prefilled=prefilled)
    assert isinstance(value, float)
    assert 0.0 <= value <= 1.0


def test_structure_around_hostile_content_still_counts():
    # Surrogates and control characters around real words do not stop the words counting.
    words = "<reasoning>I add two and two\ud800\x00\x1b[31m</reasoning><answer>4\udc00</answer>"
    assert xml_format_reward(words, mode="strict") == 1.0
    assert xml_format_reward("\x00" + words + "\x00", mode="soft") == 1.0
    assert xml_format_reward(HOSTILE["one megabyte inside the answer"], mode="strict") == 1.0


def test_surrogates_and_control_characters_alone_are_not_content():
    only_controls = "<reasoning>\x00\x01\x1b\x7f</reasoning>\x00<answer>\x08</answer>\x00"
    for text in (HOSTILE["lone surrogates"], only_controls):
        assert xml_format_reward(text, mode="soft") == 0.0
        assert xml_format_reward(text) <= 0.25


def test_blank_completions_score_zero():
    for name in ("empty", "spaces", "whitespace mix"):
        for mode in ("incremental", "soft", "strict"):
            assert xml_format_reward(HOSTILE[name], mode=mode) == 0.0


def test_deep_nesting_is_not_the_structure():
    for name in ("ten thousand nested tags", "ten thousand nested pairs", "nested"):
        assert xml_format_reward(HOSTILE[name], mode="soft") == 0.0
        assert xml_format_reward(HOSTILE[name], mode="incremental") < 0.5


def test_lookalike_tags_are_not_tags():
    for name in ("odd casing", "self-closing", "spaces in tags"):
        assert xml_format_reward(HOSTILE[name]) == 0.0
    # An opening tag with attributes counts like no opening tag; the plain closing tags still count.
    with_attributes = HOSTILE["attributes"]
    without_openings = "a</reasoning>4</answer>"
    assert xml_format_reward(with_attributes) == xml_format_reward(without_openings) > 0.0


def test_hostile_text_in_the_conversational_shape():
    for content in (None, "", [{"type": "text", "text": HOSTILE["lone surrogates"]}]):
        value = xml_format_reward([{"role": "assistant", "content": content}])
        assert 0.0 <= value <= 1.0
