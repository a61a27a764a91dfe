"""What the property checks read for ``xml-format``: the direction pairs, rows, gold completions (``CHECKS``).

Only called by the checks, so hypothesis is imported inside each function. Each direction's
strategy returns ``(better, worse, columns)`` with plain-string completions and no columns.

Completions are built from *segments*: markers (``<answer>``), element contents and noise.
A marker is only ever inserted at a point that is not inside an existing marker, because
splitting ``<answer>`` into ``<ans<reasoning>wer>`` removes a tag rather than adding one.
"""

from __future__ import annotations

import functools

from grpo_core import Direction, RewardChecks

from grpo_reward_xml.degenerate import degenerate
from grpo_reward_xml.reward import (DEFAULT_MIN_ANSWER_CHARS, DEFAULT_MIN_CHARS, Layout, content_chars, gold_completion,
                                    minimums, parse_tags)


def _composite(function):
    """``st.composite``, applied on first call so that importing this module does not import hypothesis."""

    @functools.wraps(function)
    def strategy(*args, **kwargs):
        from hypothesis import strategies as st

        return st.composite(function)(*args, **kwargs)

    return strategy


def _whitespace():
    from hypothesis import strategies as st

    return st.text(alphabet=" \n\t\r", max_size=3)


def _layout(params: dict) -> tuple[Layout, str]:
    layout = parse_tags(params["tags"])
    return layout, layout.markers[0] if params["prefilled"] else ""


def noise(layout: Layout):
    """Text that is not a marker of ``layout`` on its own: near-misses, stray brackets, any characters."""
    from hypothesis import strategies as st

    near_misses = ["<", ">", "</", "/>", "<<", ">>", "< >", "<>"]
    for name in layout.names:
        near_misses += [
            f"<{name.upper()}>",
            f"<{name.capitalize()}>",
            f'<{name} id="1">',
            f"< {name}>",
            f"<{name}/>",
            f"<{name}",
            f"</{name}",
            f"{name}>",
        ]
    letters = sorted(set("".join(layout.names)))
    alphabet = st.sampled_from([" ", "\n", "<", ">", "/", "x", "7", *letters])
    return st.one_of(
        st.sampled_from(near_misses),
        st.text(alphabet=alphabet, max_size=8),
        st.text(max_size=6),
    )


WORD_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789ÉéжΩ中٤"


def content(layout: Layout, need: int = 0):
    """Non-blank element content containing no marker (``3 < 4`` style brackets allowed).

    With ``need``, the content holds at least that many content characters, so it counts as filled.
    """
    from hypothesis import strategies as st

    if need:
        words = st.text(alphabet=WORD_LETTERS, min_size=need, max_size=need + 4)
        text = st.tuples(st.text(max_size=6), words, st.text(max_size=6)).map("".join)
    else:
        text = st.text(min_size=1, max_size=20)
    return text.filter(
        lambda t: t.strip() and not any(marker in t for marker in layout.markers)
        and (not need or content_chars(t, need) >= need)
    )


def _minimums(layout: Layout, params: dict) -> tuple[int, ...]:
    return minimums(
        layout,
        params.get("min_chars", DEFAULT_MIN_CHARS),
        params.get("min_answer_chars", DEFAULT_MIN_ANSWER_CHARS),
    )


@_composite
def clean_segments(draw, layout: Layout, prefilled: bool, needs: tuple[int, ...] | None = None) -> list[str]:
    """A clean structure as a list of segments (markers are whole segments), whitespace around and between.

    Each element's content holds at least its minimum of content characters (``needs``, default 1 each).
    """
    needs = needs or (1,) * len(layout.names)
    segments = [draw(_whitespace())]
    for index, name in enumerate(layout.names):
        if index:
            segments.append(draw(_whitespace()))
        segments += [f"<{name}>", draw(content(layout, needs[index])), f"</{name}>"]
    segments.append(draw(_whitespace()))
    if prefilled:  # the completion starts inside the first element
        segments = segments[2:]
    return [segment for segment in segments if segment]


def _marker_spans(text: str, markers: tuple[str, ...]) -> list[tuple[int, int]]:
    spans = []
    for marker in markers:
        start = text.find(marker)
        while start >= 0:
            spans.append((start, start + len(marker)))
            start = text.find(marker, start + len(marker))
    return spans


def _outside_markers(text: str, position: int, markers: tuple[str, ...], offset: int = 0) -> int:
    """``position`` moved to the start of the marker it falls strictly inside, if any."""
    for start, end in _marker_spans(text, markers):
        if start < position + offset < end:
            return start - offset
    return position


@_composite
def _missing_tag_pair(draw, params):
    from hypothesis import assume
    from hypothesis import strategies as st

    layout, prefix = _layout(params)
    markers = layout.markers
    # With prefilled the first opening tag is already there, so it is never missing.
    missing = draw(st.integers(1 if prefix else 0, len(markers) - 1))
    others = [m for i, m in enumerate(markers) if i != missing]
    if draw(st.booleans()):
        pieces = draw(st.lists(st.one_of(st.sampled_from(others), noise(layout)), max_size=12))
    else:  # a near-clean structure that lost this tag (and maybe others), with noise inserted
        pieces = [s for s in draw(clean_segments(layout, params["prefilled"], _minimums(layout, params))) if s != markers[missing]]
        keep = draw(st.lists(st.booleans(), min_size=len(pieces), max_size=len(pieces)))
        pieces = [p for p, k in zip(pieces, keep) if k or p not in markers]
        for _ in range(draw(st.integers(0, 2))):
            pieces.insert(draw(st.integers(0, len(pieces))), draw(noise(layout)))
    worse = "".join(pieces)
    assume(markers[missing] not in prefix + worse)  # noise pieces can spell it by accident
    at = draw(st.integers(0, len(worse)))
    at = _outside_markers(prefix + worse, at, markers, offset=len(prefix))
    better = worse[:at] + markers[missing] + worse[at:]
    return better, worse, {}


def missing_tag_pairs(params):
    """(with a missing tag inserted anywhere outside other tags, without it): better >= worse."""
    return _missing_tag_pair(params)


@_composite
def _content_pair(draw, params):
    from hypothesis import assume
    from hypothesis import strategies as st

    layout, prefix = _layout(params)
    markers = layout.markers
    element = draw(st.integers(0, len(layout.names) - 1))
    open_, close = markers[2 * element], markers[2 * element + 1]
    others = [m for m in markers if m not in (open_, close)]
    context = st.lists(
        st.one_of(st.sampled_from(others), noise(layout)) if others else noise(layout), max_size=6
    ).map("".join)
    blank, text, after = draw(_whitespace()), draw(content(layout)), draw(context)
    if prefix and element == 0:  # the completion starts inside this element
        worse, better = blank + close + after, blank + text + close + after
    else:
        before = draw(context)
        worse = before + open_ + blank + close + after
        better = before + open_ + blank + text + close + after
    # The property is about one pair of tags: each must occur once.
    assume((prefix + worse).count(open_) == 1 and (prefix + worse).count(close) == 1)
    return better, worse, {}


def content_pairs(params):
    """(an element's tags around content, the same tags around whitespace), any text around: better >= worse."""
    return _content_pair(params)


@_composite
def _clean_content_pair(draw, params):
    from hypothesis import strategies as st

    layout, prefix = _layout(params)
    segments = draw(clean_segments(layout, params["prefilled"], _minimums(layout, params)))
    contents = [i for i, s in enumerate(segments) if s not in layout.markers and s.strip()]
    index = draw(st.sampled_from(contents))
    emptied = segments[:index] + [draw(_whitespace())] + segments[index + 1 :]
    return "".join(segments), "".join(emptied), {}


def clean_content_pairs(params):
    """(a clean structure, the same with one element's content blanked): better > worse."""
    return _clean_content_pair(params)


@_composite
def _clean_vs_broken_pair(draw, params):
    from hypothesis import strategies as st

    layout, prefix = _layout(params)
    markers = layout.markers
    segments = draw(clean_segments(layout, params["prefilled"], _minimums(layout, params)))
    clean = "".join(segments)
    placed = [i for i, s in enumerate(segments) if s in markers]
    if len(placed) >= 2 and draw(st.booleans()):  # misorder: swap two tags
        i, j = draw(st.lists(st.sampled_from(placed), min_size=2, max_size=2, unique=True))
        broken = list(segments)
        broken[i], broken[j] = broken[j], broken[i]
        return clean, "".join(broken), {}
    # duplicate: any tag again (the prefilled one included), anywhere outside other tags
    extra = draw(st.sampled_from(markers))
    at = _outside_markers(clean, draw(st.integers(0, len(clean))), markers)
    return clean, clean[:at] + extra + clean[at:], {}


def clean_vs_broken_pairs(params):
    """(a clean structure, the same with one tag duplicated or two tags swapped): better > worse."""
    return _clean_vs_broken_pair(params)


def rows(params: dict):
    """The reward reads no column, so every row is ``{}``."""
    from hypothesis import strategies as st

    return st.just({})


def gold(columns: dict, params: dict) -> str:
    """The configured structure with real text in every element."""
    return gold_completion(params["tags"], params["prefilled"], params["min_chars"], params["min_answer_chars"])


CHECKS = RewardChecks(
    directions=(
        Direction("adding a missing tag never lowers the score", missing_tag_pairs),
        Direction("a tag with content scores at least as high as the same tag left empty", content_pairs),
        Direction(
            "in an otherwise clean structure, a tag with content scores higher than the same tag left empty",
            clean_content_pairs,
            strict=True,
        ),
        Direction("a clean structure beats a duplicated or misordered one", clean_vs_broken_pairs, strict=True),
    ),
    column_strategy=rows,
    gold_example=gold,
    degenerate=degenerate,
    degenerate_share=0.3,
)
