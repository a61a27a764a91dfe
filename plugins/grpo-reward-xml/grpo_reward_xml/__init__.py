"""Reward ``xml-format``: does a completion follow a tagged structure such as
``<reasoning>...</reasoning><answer>...</answer>``? How it scores: ``grpo_reward_xml.reward``.
"""

from __future__ import annotations

from grpo_core import Param, RewardSpec, hookimpl

from grpo_reward_xml.properties import CHECKS
from grpo_reward_xml.reward import (DEFAULT_MIN_ANSWER_CHARS, DEFAULT_MIN_CHARS, DEFAULT_TAGS, MODES, Layout,
                                    content_chars, gold_completion, minimums, parse_tags, validate_params,
                                    xml_format_reward)

__all__ = ["Layout", "SPEC", "content_chars", "gold_completion", "minimums", "parse_tags", "register_rewards",
           "xml_format_reward"]


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
    checks=CHECKS,
    validate=validate_params,
)


@hookimpl
def register_rewards(register):
    register(SPEC)
