"""What the checks draw completions from: text fragments, the hostile texts, and hypothesis strategies.

Public through ``grpo_core.testing``. Hypothesis is imported inside the functions that build strategies, so the
checks (which worker processes import) and ``grpo-run --help`` load it only when something is drawn.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from hypothesis import strategies as st

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
    from hypothesis import strategies as st

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
    from hypothesis import strategies as st

    text = texts() if text is None else text
    return text.flatmap(lambda t: st.sampled_from([t, as_chat(t)]))


def _deep_json(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


CHARS_PER_TOKEN = 16  # the most characters a completion's token is taken to hold, a margin over any tokenizer's
DEFAULT_MAX_COMPLETION_LENGTH = 256  # TRL's GRPOConfig default, in tokens


def _size_label(size: int) -> str:
    return "1 MB" if size == 1_000_000 else f"{size:,} characters"


def _hostile(size: int = 1_000_000) -> list[tuple[str, str]]:
    """(label, text) pairs that have crashed or hung real reward functions; the long ones ``size`` characters."""
    tags = "<think><answer></think>"
    label = _size_label(size)
    return [
        ("empty", ""),
        ("whitespace", " \n\t\r  \n"),
        (f"{label} of one letter", "x" * size),
        (f"{label} of tags", (tags * (size // len(tags)))),
        (f"{label} of digits", "9" * size),
        (f"{label} of spaces, then an answer", " " * size + "<answer>1</answer>"),
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
        ("words in the answer tag", "<answer>forty-two</answer>"),
        ("a power tower in the answer tag", "<answer>9**9**9**9</answer>"),
        ("exotic digits", "The answer is \u0664\u0662 or \uff14\uff12 or \U0001d7d2"),
        ("right-to-left text", "\u202eThe answer is 42\u202c <answer>\u0664\u0662</answer>"),
    ]


HOSTILE_TEXTS: tuple[tuple[str, str], ...] = tuple(_hostile())


def hostile_for(max_completion_length: int) -> tuple[tuple[str, str], ...]:
    """``HOSTILE_TEXTS`` with the long texts sized to what a run generating ``max_completion_length`` tokens can
    produce (``CHARS_PER_TOKEN`` characters a token, at most 1 MB), and every other text cut to that size: a reward
    slow only on longer text has no bug a run can meet."""
    size = min(1_000_000, max(1, max_completion_length) * CHARS_PER_TOKEN)
    return tuple((label, text[:size]) for label, text in _hostile(size))


def hostile_texts(include_fixed: bool = True) -> st.SearchStrategy[str]:
    """Text built to break rewards: the fixed list in ``HOSTILE_TEXTS`` or random nasty characters.

    ``include_fixed=False`` draws only the random kind (for when the fixed list is checked apart).
    """
    from hypothesis import strategies as st

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
    from hypothesis import strategies as st

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
    from hypothesis import strategies as st

    cols = columns if isinstance(columns, st.SearchStrategy) else st.just(dict(columns or {}))
    return st.tuples(base, cols).map(lambda drawn: (edit(drawn[0]), drawn[0], drawn[1]))


def json_values(max_leaves: int = 10) -> st.SearchStrategy[Any]:
    """JSON-serialisable values (for rewards about JSON)."""
    from hypothesis import strategies as st

    leaves = st.none() | st.booleans() | st.integers(-1000, 1000) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8)
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
        max_leaves=max_leaves,
    )


def json_texts(max_leaves: int = 10) -> st.SearchStrategy[str]:
    """Valid JSON documents, as text."""
    return json_values(max_leaves).map(json.dumps)


def token_ids(text: str) -> list[int]:
    """Plausible token ids for ``text`` without a tokenizer: its UTF-8 bytes (surrogates kept)."""
    return list(text.encode("utf-8", "surrogatepass"))
