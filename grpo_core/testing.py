"""The kit for reward authors: ``check_reward``, ``call_reward``, the hypothesis strategies the checks draw
from (``grpo_core.checks.texts``) and the degenerate-completion helpers (``grpo_core.checks.degenerate``).

A plugin's own tests get the whole suite in one line::

    from grpo_core.testing import check_reward

    def test_properties():
        check_reward(SPEC)

builds the completions its ``RewardChecks(degenerate=...)`` declares (ones that skip the task) from the kit::

    def degenerate(prompt, columns, params):
        from grpo_core.testing import copied_prompt, placeholders, prompt_numbers

        return [*copied_prompt(prompt, "<answer>{}</answer>"), *prompt_numbers(prompt, "<answer>{}</answer>"),
                *placeholders(("reasoning", "answer"))]

and can write their own properties with the same inputs the suite uses::

    from hypothesis import given
    from grpo_core.testing import call_reward, completions, hostile_texts

    @given(completions())
    def test_never_negative(completion):
        assert all(s is None or s >= 0 for s in call_reward(SPEC, [completion]))
"""

from __future__ import annotations

from grpo_core.checks import DEFAULT_MAX_EXAMPLES, format_report, run_checks
from grpo_core.cli import cli as grpo_run  # the command line, to invoke in a test with click's CliRunner
from grpo_core.checks.texts import (  # the strategies and texts the checks draw from, public here
    FRAGMENTS,
    HOSTILE_TEXTS,
    as_chat,
    completions,
    edited_pairs,
    hostile_texts,
    json_texts,
    json_values,
    ranked_pairs,
    texts,
    token_ids,
)
from grpo_core.checks.degenerate import (  # the kit for RewardChecks(degenerate=...), public here
    FILLER_SENTENCE,
    HANGUL_FILLERS,
    ZERO_WIDTH_SPACE,
    blank_texts,
    buried_gold,
    copied_prompt,
    empty_completions,
    generic_attacks,
    generic_degenerate,
    near_repeats,
    number_sprays,
    padded,
    padding_to,
    placeholders,
    prompt_expressions,
    prompt_numbers,
    repeated,
    tag_fillers,
)
from grpo_core.plugins import get_registry, get_spec, registered, reload_plugins  # plugins registered for one test
from grpo_core.rewards.reward import Reward, RewardSpec, completion_text

__all__ = [
    "FILLER_SENTENCE", "FRAGMENTS", "HANGUL_FILLERS", "HOSTILE_TEXTS", "ZERO_WIDTH_SPACE", "as_chat", "blank_texts",
    "buried_gold", "call_reward", "check_reward", "completions", "copied_prompt", "edited_pairs", "empty_completions",
    "generic_attacks", "generic_degenerate", "hostile_texts", "json_texts", "json_values", "near_repeats",
    "number_sprays", "padded", "padding_to", "placeholders", "prompt_expressions", "prompt_numbers", "ranked_pairs",
    "repeated", "tag_fillers", "texts", "token_ids", "get_spec", "grpo_run", "registered", "reload_plugins",
]


def call_reward(reward, completions: list, prompts: list | None = None, params: dict | None = None, **columns) -> list:
    """Score ``completions`` as TRL would: ``reward(prompts=..., completions=..., completion_ids=..., **columns)``.

    ``reward`` is a RewardSpec, an installed reward's name, or a Reward. Columns are lists, one value
    per completion, or single values that are repeated. Token ids are the texts' UTF-8 bytes.
    """
    bound = _as_reward(reward, params)
    n = len(completions)
    texts = [completion_text(c) for c in completions]
    lists = {key: value if isinstance(value, list) and len(value) == n else [value] * n for key, value in columns.items()}
    return bound(
        prompts=prompts if prompts is not None else [""] * n,
        completions=list(completions),
        completion_ids=[token_ids(t) for t in texts],
        trainer_state=None,
        **lists,
    )


def _as_reward(reward, params: dict | None):
    if isinstance(reward, Reward):
        if params:
            return Reward(reward.spec, reward.spec.resolve({**reward.params, **params}), reward.weight)
        return reward
    if isinstance(reward, str):
        reward = get_registry().reward(reward)
    if not isinstance(reward, RewardSpec):
        raise TypeError(f"expected a RewardSpec, a Reward or an installed reward's name, got {reward!r}")
    return Reward(reward, reward.resolve(params))


def check_reward(
    reward,
    params: dict | None = None,
    max_examples: int | None = None,
    seed: int | None = None,
    rows: list[dict] | None = None,
    vary_params: bool = True,
    item_timeout_s: float | None = None,
):
    """Run every property check on one reward; raise AssertionError with the report if any fails.

    ``reward`` is a RewardSpec, an installed reward's name, or a Reward; ``params`` overrides its
    defaults. The checks include the degenerate audit: completions that skip the task (the generic
    ones and those ``RewardSpec.degenerate`` declares) must not be paid. The message lists each
    failure with its counterexample, then what was not checked and why. Returns the CheckReport
    when nothing fails; ``report.unchecked()`` says what it could not check.
    """
    bound = _as_reward(reward, params)
    options = {"max_examples": max_examples or DEFAULT_MAX_EXAMPLES, "seed": seed, "rows": rows,
               "vary_params": vary_params}
    if item_timeout_s is not None:
        options["item_timeout_s"] = item_timeout_s
    report = run_checks([bound], **options)
    if not report.ok:
        raise AssertionError("reward property checks failed\n" + format_report(report, color=False))
    return report
