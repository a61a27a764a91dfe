"""The declared directions hold, as hypothesis properties, in every mode, with and without prefilled."""

import pytest
from hypothesis import find, given
from hypothesis import strategies as st

from grpo_reward_xml import SPEC, parse_tags, xml_format_reward
from grpo_reward_xml.properties import clean_vs_broken_pairs, missing_tag_pairs, noise

TAGS = ["reasoning,answer", "think,answer", "think", "plan,work,answer"]
MODES = ["incremental", "soft", "strict"]
DIRECTIONS = {d.description: d for d in SPEC.checks.directions}


def with_params(pairs, mode, prefilled):
    """Draw tags and penalize_trailing too, and return (params, pair)."""

    def draw_pair(tags_and_trailing):
        tags, trailing = tags_and_trailing
        params = {"tags": tags, "mode": mode, "prefilled": prefilled, "penalize_trailing": trailing}
        return pairs(params).map(lambda pair: (params, pair))

    return st.tuples(st.sampled_from(TAGS), st.booleans()).flatmap(draw_pair)


def test_every_direction_is_covered_below():
    assert set(DIRECTIONS) == {
        "adding a missing tag never lowers the score",
        "a tag with content scores at least as high as the same tag left empty",
        "in an otherwise clean structure, a tag with content scores higher than the same tag left empty",
        "a clean structure beats a duplicated or misordered one",
    }


@pytest.mark.parametrize("description", sorted(DIRECTIONS))
@pytest.mark.parametrize("prefilled", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_direction_holds(description, mode, prefilled):
    direction = DIRECTIONS[description]

    @given(with_params(direction.pairs, mode, prefilled))
    def check(drawn):
        params, (better, worse, columns) = drawn
        assert columns == {}
        high, low = xml_format_reward(better, **params), xml_format_reward(worse, **params)
        if direction.strict:
            assert high > low, (better, worse)
        else:
            assert high >= low, (better, worse)

    check()


@pytest.mark.parametrize("prefilled", [False, True])
def test_missing_tag_pairs_really_add_one_missing_tag(prefilled):
    @given(with_params(missing_tag_pairs, "incremental", prefilled))
    def check(drawn):
        params, (better, worse, _) = drawn
        markers = parse_tags(params["tags"]).markers
        prefix = markers[0] if prefilled else ""
        added = [m for m in markers if (prefix + better).count(m) == 1 and (prefix + worse).count(m) == 0]
        assert len(added) == 1
        assert len(better) == len(worse) + len(added[0])
        # Incremental credit for a tag is always earned, whatever else the text holds.
        assert xml_format_reward(better, **params) > xml_format_reward(worse, **params)

    check()


@pytest.mark.parametrize("mode", MODES)
@given(
    tags=st.sampled_from(TAGS),
    prefilled=st.booleans(),
    text=st.lists(
        st.one_of(st.sampled_from(parse_tags("reasoning,answer,think").markers), noise(parse_tags("think,answer"))),
        max_size=15,
    ).map("".join),
)
def test_any_text_scores_inside_the_bounds(mode, tags, prefilled, text):
    value = xml_format_reward(text, tags=tags, mode=mode, prefilled=prefilled)
    assert isinstance(value, float)
    assert 0.0 <= value <= 1.0
    assert value == xml_format_reward(text, tags=tags, mode=mode, prefilled=prefilled)


def notebook_xmlcount(text):
    """The widely copied xmlcount_reward_func scorer, for showing what the directions catch."""
    count = 0.0
    if text.count("<reasoning>\n") == 1:
        count += 0.125
    if text.count("\n</reasoning>\n") == 1:
        count += 0.125
    if text.count("\n<answer>\n") == 1:
        count += 0.125
        count -= len(text.split("\n</answer>\n")[-1]) * 0.001
    if text.count("\n</answer>") == 1:
        count += 0.125
        count -= (len(text.split("\n</answer>")[-1]) - 1) * 0.001
    return count


def tag_counter(text):
    """A reward that counts tags without asking for exactly one of each."""
    return min(1.0, sum(text.count(t) for t in ("<reasoning>", "</reasoning>", "<answer>", "</answer>")) / 4)


def test_the_directions_catch_a_reward_that_pays_for_duplicates():
    params = {"tags": "reasoning,answer", "mode": "incremental", "prefilled": False}
    better, worse, _ = find(clean_vs_broken_pairs(params), lambda p: not tag_counter(p[0]) > tag_counter(p[1]))
    assert tag_counter(worse) >= tag_counter(better)


def test_adding_the_closing_tag_pays_here_but_not_in_the_notebook_reward():
    # Its </answer> credit is unbounded below: a long tail makes adding the tag lower the score.
    tail = "The answer is four, as computed above. " * 5
    worse = "<reasoning>\nfour\n</reasoning>\n<answer>\n4" + tail
    better = "<reasoning>\nfour\n</reasoning>\n<answer>\n4\n</answer>" + tail
    assert notebook_xmlcount(better) < notebook_xmlcount(worse)
    assert xml_format_reward(better) > xml_format_reward(worse)
