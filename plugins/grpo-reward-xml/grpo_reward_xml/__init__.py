"""Reward ``xml-format``: does a completion follow a tagged structure such as
``<reasoning>...</reasoning><answer>...</answer>``? How it scores: ``grpo_reward_xml.reward``.
"""

from __future__ import annotations

from grpo_core import Direction, Param, RewardChecks, RewardSpec, hookimpl

from grpo_reward_xml.reward import (DEFAULT_MIN_ANSWER_CHARS, DEFAULT_MIN_CHARS, DEFAULT_TAGS, MODES, Layout,
                                    content_chars, gold_completion, minimums, parse_tags, xml_format_reward)

__all__ = ["Layout", "SPEC", "content_chars", "gold_completion", "minimums", "parse_tags", "register_rewards",
           "xml_format_reward"]


def _gold(columns, params):
    return gold_completion(params["tags"], params["prefilled"], params["min_chars"], params["min_answer_chars"])


def _validate(params):
    parse_tags(params["tags"])
    for name in ("min_chars", "min_answer_chars"):
        if params[name] < 1:
            raise ValueError(f"{name} must be 1 or more (an element needs some real text), got {params[name]}")


def _degenerate(prompt, columns, params):
    from grpo_reward_xml.degenerate import degenerate_completions

    return degenerate_completions(prompt, params)


def _rows(params):
    from hypothesis import strategies as st

    return st.just({})


def _missing_tag_pairs(params):
    from grpo_reward_xml.properties import missing_tag_pairs

    return missing_tag_pairs(params)


def _content_pairs(params):
    from grpo_reward_xml.properties import content_pairs

    return content_pairs(params)


def _clean_content_pairs(params):
    from grpo_reward_xml.properties import clean_content_pairs

    return clean_content_pairs(params)


def _clean_vs_broken_pairs(params):
    from grpo_reward_xml.properties import clean_vs_broken_pairs

    return clean_vs_broken_pairs(params)


SPEC = RewardSpec(
    name="xml-format",
    description="Tagged format such as <reasoning>...</reasoning><answer>...</answer>, with partial credit by default",
    func=xml_format_reward,
    bounds=(0.0, 1.0),
    params=(
        Param("tags", DEFAULT_TAGS, str, "element names in order, comma-separated, e.g. think,answer"),
        Param("mode", "incremental", str, "partial credit per tag, the structure anywhere, or exactly the structure", MODES),
        Param("prefilled", False, bool, "the chat template already wrote the first opening tag (e.g. <think>)"),
        Param("penalize_trailing", True, bool, "incremental: take a little off for text after the last closing tag"),
        Param("min_chars", DEFAULT_MIN_CHARS, int, "visible letters and digits (not whitespace, punctuation, "
              "underscores or blank-rendering characters) an element needs to count as filled; above 1, at least "
              "two distinct ones"),
        Param("min_answer_chars", DEFAULT_MIN_ANSWER_CHARS, int,
              "the same for the last element when there are two or more (an answer may be one digit)"),
    ),
    checks=RewardChecks(
        directions=(
            Direction("adding a missing tag never lowers the score", _missing_tag_pairs),
            Direction("a tag with content scores at least as high as the same tag left empty", _content_pairs),
            Direction(
                "in an otherwise clean structure, a tag with content scores higher than the same tag left empty",
                _clean_content_pairs,
                strict=True,
            ),
            Direction("a clean structure beats a duplicated or misordered one", _clean_vs_broken_pairs, strict=True),
        ),
        column_strategy=_rows,
        gold_example=_gold,
        degenerate=_degenerate,
        degenerate_share=0.3,
    ),
    validate=_validate,
)


@hookimpl
def register_rewards(register):
    register(SPEC)
