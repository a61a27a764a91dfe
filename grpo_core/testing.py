"""Property checks for reward authors: ``check_reward`` and the hypothesis strategies behind it.

A plugin's own tests get the whole suite in one line::

    from grpo_core.testing import check_reward

    def test_properties():
        check_reward(SPEC)

builds the completions its ``RewardSpec.degenerate`` declares (ones that skip the task) from the kit::

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

import json
from typing import Any, Callable

from hypothesis import strategies as st

from grpo_core.degenerate import (  # the kit for RewardSpec.degenerate, public here
    FILLER_SENTENCE,
    ZERO_WIDTH_SPACE,
    copied_prompt,
    empty_completions,
    generic_degenerate,
    padded,
    padding_to,
    placeholders,
    prompt_expressions,
    prompt_numbers,
    repeated,
)

__all__ = [
    "FILLER_SENTENCE", "FRAGMENTS", "HOSTILE_TEXTS", "ZERO_WIDTH_SPACE", "as_chat", "call_reward", "check_reward",
    "completions", "copied_prompt", "edited_pairs", "empty_completions", "generic_degenerate", "hostile_texts",
    "json_texts", "json_values", "padded", "padding_to", "placeholders", "prompt_expressions", "prompt_numbers",
    "ranked_pairs", "repeated", "texts", "token_ids",
]

# Pieces of the texts rewards look at (tags, answers, JSON, LaTeX), so drawn text hits real code paths.
FRAGMENTS = (
    "<think>", "</think>", "<answer>", "</answer>", "<reasoning>", "</reasoning>", "<", ">", "/",
    "\\boxed{", "}", "{", "[", "]", "(", ")", '"', ":", ",", ".", "\n", " ", "  ", "\t",
    "0", "1", "2", "42", "-3", "3.14", "1/2", "1e5", "x", "=", "+", "*", "^",
    "The answer is ", "Answer: ", "#### ", "$", "$$", "\\frac{1}{2}", "\\sqrt{2}", "\\pi",
    '{"a": 1}', '{"name": "x", "age": 3}', "[1, 2]", "true", "null", "```json\n", "```",
    "é", "中", "🙂",
)


def texts(max_size: int = 60) -> st.SearchStrategy[str]:
    """Ordinary completion text: arbitrary unicode, or a mix of tags, numbers, JSON and LaTeX."""
    pieces = st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4))
    return st.one_of(
        st.text(max_size=max_size),
        st.lists(pieces, max_size=max(1, max_size // 4)).map("".join),
    )


def as_chat(text: str, role: str = "assistant") -> list[dict]:
    """``text`` in the conversational shape TRL produces: ``[{"role": role, "content": text}]``."""
    return [{"role": role, "content": text}]


def completions(text: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[Any]:
    """Completions in both shapes TRL produces: plain strings and ``[{"role": "assistant", ...}]``."""
    text = texts() if text is None else text
    return text.flatmap(lambda t: st.sampled_from([t, as_chat(t)]))


def _deep_json(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def _hostile() -> list[tuple[str, str]]:
    """(label, text) pairs that have crashed or hung real reward functions."""
    tags = "<think><answer></think>"
    return [
        ("empty", ""),
        ("whitespace", " \n\t\r  \n"),
        ("1 MB of one letter", "x" * 1_000_000),
        ("1 MB of tags", (tags * (1_000_000 // len(tags)))),
        ("1 MB of digits", "9" * 1_000_000),
        ("1 MB of spaces, then an answer", " " * 1_000_000 + "<answer>1</answer>"),
        ("control characters", "".join(chr(i) for i in range(32)) + "\x7f\x85\u2028\u2029\ufeff\u200b\u202e"),
        ("NUL bytes", "answer\x00is\x00\x00 42"),
        ("lone surrogate", "\ud800"),
        ("surrogates in text", "The answer is \udfff 4\ud83d2"),
        ("unbalanced tags", "<answer><answer></think></answer></think><think>"),
        ("unclosed tag", "<think>" + "a" * 5000 + "<answer"),
        ("thousand open tags", "<answer>" * 1000),
        ("angle brackets", "<<<<>>>><><</>" * 200),
        ("10,000-deep JSON array", "[" * 10_000 + "]" * 10_000),
        ("10,000-deep JSON object", _deep_json(10_000)),
        ("unclosed JSON", '{"a": [1, 2, {"b": "' + "c" * 1000),
        ("JSON with huge number", '{"a": ' + "9" * 5000 + "}"),
        ("JSON NaN and Infinity", '{"a": NaN, "b": Infinity, "c": -Infinity}'),
        ("fenced JSON, broken", "```json\n{\"a\": }\n```"),
        # One of each way symbolic math blows up: exponent towers, evaluation, recursion depth.
        ("LaTeX power tower", "\\boxed{9^{9^{9^{9^{9^{9}}}}}}"),
        ("Python power tower", "The answer is 9**9**9**9**9"),
        ("huge factorial", "\\boxed{(10^{100})!}"),
        ("nested fractions", "\\boxed{" + "\\frac{1}{" * 500 + "2" + "}" * 1001),
        ("deep parentheses", "\\boxed{" + "(" * 3000 + "1" + ")" * 3000 + "}"),
        ("unbalanced braces", "\\boxed{" + "{" * 5000),
        ("many boxes", "\\boxed{1}" * 5000),
        ("number with thousands of digits", "The answer is " + "1" * 20_000),
        ("exotic digits", "The answer is \u0664\u0662 or \uff14\uff12 or \U0001d7d2"),
        ("right-to-left text", "\u202eThe answer is 42\u202c <answer>\u0664\u0662</answer>"),
    ]


HOSTILE_TEXTS: tuple[tuple[str, str], ...] = tuple(_hostile())


def hostile_texts(include_fixed: bool = True) -> st.SearchStrategy[str]:
    """Text built to break rewards: the fixed list in ``HOSTILE_TEXTS`` or random nasty characters.

    ``include_fixed=False`` draws only the random kind (for when the fixed list is checked apart).
    """
    nasty = st.characters(codec=None, exclude_categories=())  # surrogates and controls included
    pieces = st.one_of(st.sampled_from(FRAGMENTS), st.text(alphabet=nasty, max_size=6))
    random_kind = [st.text(alphabet=nasty, max_size=80), st.lists(pieces, max_size=30).map("".join)]
    if include_fixed:
        return st.one_of(st.sampled_from([text for _, text in HOSTILE_TEXTS]), *random_kind)
    return st.one_of(*random_kind)


def ranked_pairs(
    values: st.SearchStrategy[Any],
    rank: Callable[[Any], Any],
    render: Callable[[Any], str] = str,
    columns: dict | st.SearchStrategy[dict] | None = None,
) -> st.SearchStrategy[tuple[str, str, dict]]:
    """Direction pairs from two drawn values: the one with the higher ``rank`` is ``better``.

    ``render`` turns a value into a completion; ``columns`` (a dict or a strategy of dicts) is
    passed along unchanged. Ties are allowed, so use with a non-strict Direction.
    """
    cols = columns if isinstance(columns, st.SearchStrategy) else st.just(dict(columns or {}))

    def order(drawn):
        (a, b), row = drawn
        better, worse = (a, b) if rank(a) >= rank(b) else (b, a)
        return render(better), render(worse), row

    return st.tuples(st.tuples(values, values), cols).map(order)


def edited_pairs(
    base: st.SearchStrategy[str],
    edit: Callable[[str], str],
    columns: dict | st.SearchStrategy[dict] | None = None,
) -> st.SearchStrategy[tuple[str, str, dict]]:
    """Direction pairs ``(edit(text), text, columns)``: the edit (e.g. adding a missing tag) never hurts."""
    cols = columns if isinstance(columns, st.SearchStrategy) else st.just(dict(columns or {}))
    return st.tuples(base, cols).map(lambda drawn: (edit(drawn[0]), drawn[0], drawn[1]))


def json_values(max_leaves: int = 10) -> st.SearchStrategy[Any]:
    """JSON-serialisable values (for rewards about JSON)."""
    leaves = st.none() | st.booleans() | st.integers(-1000, 1000) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8)
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
        max_leaves=max_leaves,
    )


def json_texts(max_leaves: int = 10) -> st.SearchStrategy[str]:
    """Valid JSON documents, as text."""
    return json_values(max_leaves).map(json.dumps)


def call_reward(reward, completions: list, prompts: list | None = None, params: dict | None = None, **columns) -> list:
    """Score ``completions`` as TRL would: ``reward(prompts=..., completions=..., completion_ids=..., **columns)``.

    ``reward`` is a RewardSpec, an installed reward's name, or a Reward. Columns are lists, one value
    per completion, or single values that are repeated. Token ids are the texts' UTF-8 bytes.
    """
    from grpo_core.rewards import completion_text

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


def token_ids(text: str) -> list[int]:
    """Plausible token ids for ``text`` without a tokenizer: its UTF-8 bytes (surrogates kept)."""
    return list(text.encode("utf-8", "surrogatepass"))


def _as_reward(reward, params: dict | None):
    from grpo_core.rewards import Reward, RewardSpec

    if isinstance(reward, Reward):
        if params:
            return Reward(reward.spec, reward.spec.resolve({**reward.params, **params}), reward.weight)
        return reward
    if isinstance(reward, str):
        from grpo_core.plugins import get_registry

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
    from grpo_core import checks

    bound = _as_reward(reward, params)
    options = {"max_examples": max_examples or checks.DEFAULT_MAX_EXAMPLES, "seed": seed, "rows": rows,
               "vary_params": vary_params}
    if item_timeout_s is not None:
        options["item_timeout_s"] = item_timeout_s
    report = checks.run_checks([bound], **options)
    if not report.ok:
        raise AssertionError("reward property checks failed\n" + checks.format_report(report, color=False))
    return report
