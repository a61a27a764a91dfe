"""Reward ``xml-format``: does a completion follow a tagged structure such as
``<reasoning>...</reasoning><answer>...</answer>``?

The completion is scanned for its *markers*: the opening and closing tag of each configured
element, written exactly (``<answer>``; ``<Answer>`` or ``<answer id="1">`` are plain text).
Every mode counts markers with ``str.count``/``str.find``, so scoring is linear in the length
of the completion whatever its tags look like.

An element is *filled* only when its content holds real text: at least ``min_chars`` visible
letters and digits (``min_answer_chars`` for the last of two or more elements), counted by
``content_chars``. Whitespace, punctuation, underscores, invisible characters (format
characters, Hangul fillers and every other default-ignorable code point) and the configured
markers count nothing. An element that needs more than one character needs more than one
distinct letter or digit (``aaaaaaaaaaaa`` counts nothing there); one that needs a single
character is filled by any, so ``<answer>7</answer>`` and ``<answer>11</answer>`` are filled
answers and ``<answer>.</answer>`` is an empty one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import islice

from grpo_core import completion_text

MODES = ("incremental", "soft", "strict")
DEFAULT_TAGS = "reasoning,answer"

DEFAULT_MIN_CHARS = 12  # about three words of reasoning
DEFAULT_MIN_ANSWER_CHARS = 1  # an answer may be a single digit

# Incremental mode: shares of the score, each split evenly over its items. Content carries most of
# it, so tags around nothing (or around a placeholder) earn little.
PRESENCE_SHARE = 0.15  # each marker present exactly once
ORDER_SHARE = 0.10  # each consecutive pair of markers in the right order
CONTENT_SHARE = 0.75  # each element with real content, in proportion up to its minimum
# Text after the last closing tag costs at most half of that tag's presence credit, so adding
# the tag always pays and the score never goes below 0; the full cost is reached at this many
# visible letters and digits (what counts as content counts as trailing text, outside any element).
TRAILING_CHARS = 100

_FORBIDDEN_IN_NAME = set("<>/\"'=&,")
# Letters and digits (categories L and N) in any script, less those that render blank: the Hangul
# fillers are category Lo but default-ignorable, and Python's \w counts them (and underscores).
_VISIBLE = r"[\p{L}\p{N}]--\p{Default_Ignorable_Code_Point}"


@dataclass(frozen=True)
class Layout:
    """The configured elements and their markers, in order: ``<a>``, ``</a>``, ``<b>``, ``</b>``..."""

    names: tuple[str, ...]
    markers: tuple[str, ...]


@lru_cache(maxsize=64)
def parse_tags(tags: str) -> Layout:
    """The layout for a ``tags`` value such as ``"reasoning,answer"`` (element names in order).

    Raises ValueError with a sentence naming the bad value.
    """
    if not isinstance(tags, str):
        raise ValueError(f"tags must be comma-separated element names such as 'reasoning,answer', got {tags!r}")
    names = tuple(part.strip() for part in tags.split(","))
    if not any(names):
        raise ValueError(f"tags must name at least one element, e.g. tags=reasoning,answer; got {tags!r}")
    seen = set()
    for name in names:
        if not name:
            raise ValueError(f"tags has an empty name in {tags!r}; separate names with single commas, e.g. think,answer")
        bad = [ch for ch in name if ch.isspace() or ch in _FORBIDDEN_IN_NAME]
        if bad:
            raise ValueError(
                f"tag name {name!r} contains {bad[0]!r}; write bare element names without brackets, "
                f"spaces or attributes, e.g. tags=think,answer"
            )
        if name in seen:
            raise ValueError(f"tag name {name!r} appears twice in {tags!r}; name each element once")
        seen.add(name)
    markers = tuple(marker for name in names for marker in (f"<{name}>", f"</{name}>"))
    return Layout(names, markers)


@dataclass(frozen=True)
class Scan:
    """Where the markers are in a text: count of each, and the position of those seen exactly once."""

    text: str
    layout: Layout
    counts: tuple[int, ...]
    positions: tuple[int, ...]  # -1 unless the marker occurs exactly once
    minimums: tuple[int, ...]  # content characters each element needs to count as filled

    def once(self, i: int) -> bool:
        """Marker i occurs exactly once."""
        return self.counts[i] == 1

    def in_order(self, i: int) -> bool:
        """Markers i and i+1 each occur once, i before i+1."""
        return self.positions[i] >= 0 and self.positions[i + 1] > self.positions[i]

    def end(self, i: int) -> int:
        """Where marker i ends (it must occur once)."""
        return self.positions[i] + len(self.layout.markers[i])

    def content(self, element: int) -> str | None:
        """The text between an element's opening and closing marker, or None if they are not a pair."""
        open_, close = 2 * element, 2 * element + 1
        if not self.in_order(open_):
            return None
        return self.text[self.end(open_) : self.positions[close]]

    def fill(self, element: int) -> float:
        """How far the element's content characters reach toward its minimum, from 0.0 to 1.0 (0.0 unless a pair)."""
        inner = self.content(element)
        if inner is None:
            return 0.0
        if "<" in inner:  # markers inside are not content
            inner = _remove_markers(inner, self.layout.markers)
        need = self.minimums[element]
        return content_chars(inner, need) / need

    def filled(self, element: int) -> bool:
        """The element is a pair holding at least its minimum of content characters."""
        return self.fill(element) >= 1.0

    def trailing(self) -> str:
        """The text after the last closing marker (it must occur once), less the content of pairs there.

        Content is scored as content wherever it stands, so writing more of it never costs trailing credit.
        """
        start = self.end(len(self.layout.markers) - 1)
        spans = sorted((self.end(2 * e), self.positions[2 * e + 1]) for e in range(len(self.layout.names))
                       if self.in_order(2 * e) and self.positions[2 * e] >= start)
        pieces = []
        for begin, stop in spans:  # pairs may nest: skip what an earlier span already cut
            if begin > start:
                pieces.append(self.text[start:begin])
            start = max(start, stop)
        pieces.append(self.text[start:])
        return "".join(pieces)


@lru_cache(maxsize=1)
def _visible():
    import regex  # imported on first use, so discovering plugins stays cheap

    return regex.compile(f"[{_VISIBLE}]", regex.V1)


@lru_cache(maxsize=256)
def _visible_but(char: str):
    import regex

    return regex.compile(f"[{_VISIBLE}--[{regex.escape(char)}]]", regex.V1)


def visible_chars(text: str, limit: int) -> int:
    """Visible letters and digits in ``text``, in any script, counting no further than ``limit``."""
    return sum(1 for _ in islice(_visible().finditer(text), limit))


def content_chars(text: str, need: int) -> int:
    """What ``text`` holds toward an element that needs ``need`` characters, counting no further than ``need``.

    Its visible letters and digits; where more than one is needed, content that repeats a single one
    (``aaaaaaaaaaaa``) counts nothing, while an element that needs one is filled by any (``7``, ``11``).
    """
    count = min(need, visible_chars(text, need))
    if need <= 1 or count == 0:
        return count
    first = _visible().search(text).group()
    return count if _visible_but(first).search(text) else 0


def _remove_markers(text: str, markers: tuple[str, ...]) -> str:
    # One left-to-right pass, so text that only looks like a marker once another is removed stays.
    pieces = [text]
    for marker in markers:
        pieces = [part for piece in pieces for part in piece.split(marker)]
    return "".join(pieces)


def minimums(layout: Layout, min_chars: int, min_answer_chars: int) -> tuple[int, ...]:
    """Content characters each element needs: ``min_answer_chars`` for the last of two or more, else ``min_chars``."""
    k = len(layout.names)
    return (min_chars,) * (k - 1) + ((min_answer_chars if k > 1 else min_chars),)


def scan(
    text: str,
    layout: Layout,
    min_chars: int = DEFAULT_MIN_CHARS,
    min_answer_chars: int = DEFAULT_MIN_ANSWER_CHARS,
) -> Scan:
    """Count every marker of ``layout`` in ``text`` and locate those that occur exactly once."""
    counts = tuple(text.count(marker) for marker in layout.markers)
    positions = tuple(text.find(marker) if count == 1 else -1 for marker, count in zip(layout.markers, counts))
    return Scan(text, layout, counts, positions, minimums(layout, min_chars, min_answer_chars))


def _well_formed(s: Scan) -> bool:
    # Every consecutive pair in order means every marker occurs exactly once.
    in_order = all(s.in_order(i) for i in range(len(s.layout.markers) - 1))
    return in_order and all(s.filled(e) for e in range(len(s.layout.names)))


def strict_score(s: Scan) -> float:
    """1.0 if the text is exactly the structure (whitespace allowed around and between elements), else 0.0."""
    if not _well_formed(s):
        return 0.0
    n = len(s.layout.markers)
    gaps = [s.text[: s.positions[0]], s.text[s.end(n - 1) :]]
    gaps += [s.text[s.end(i) : s.positions[i + 1]] for i in range(1, n - 1, 2)]
    return 1.0 if all(not gap.strip() for gap in gaps) else 0.0


def soft_score(s: Scan) -> float:
    """1.0 if every marker occurs once, in order, around non-blank content; other text anywhere."""
    return 1.0 if _well_formed(s) else 0.0


def incremental_score(s: Scan, penalize_trailing: bool = True) -> float:
    """Partial credit: markers present once, consecutive markers in order, elements with real content
    (in proportion up to their minimum of content characters), less a bounded penalty for text after the
    last closing tag."""
    n, k = len(s.layout.markers), len(s.layout.names)
    present = sum(s.once(i) for i in range(n))
    ordered = sum(s.in_order(i) for i in range(n - 1))
    filled = sum(s.fill(e) for e in range(k))
    # With one element there is one pair (open, close), so n - 1 >= 1.
    score = PRESENCE_SHARE * present / n + ORDER_SHARE * ordered / (n - 1) + CONTENT_SHARE * filled / k
    if penalize_trailing and s.once(n - 1):
        trailing = visible_chars(s.trailing(), TRAILING_CHARS)
        score -= PRESENCE_SHARE / n / 2 * min(1.0, trailing / TRAILING_CHARS)
    return min(1.0, max(0.0, score))


def xml_format_reward(
    completion,
    *,
    tags: str = DEFAULT_TAGS,
    mode: str = "incremental",
    prefilled: bool = False,
    penalize_trailing: bool = True,
    min_chars: int = DEFAULT_MIN_CHARS,
    min_answer_chars: int = DEFAULT_MIN_ANSWER_CHARS,
) -> float:
    """Score how well ``completion`` follows the tagged structure named by ``tags``, in [0, 1].

    ``mode`` is ``incremental`` (partial credit), ``soft`` (the structure somewhere, 0 or 1) or
    ``strict`` (the whole completion is the structure, 0 or 1). With ``prefilled`` the chat
    template already wrote the first opening tag, so the completion is scored as if it began
    with it. An element counts as filled with at least ``min_chars`` content characters
    (``min_answer_chars`` for the last of two or more elements; see ``content_chars``).
    """
    if not isinstance(completion, str):
        completion = completion_text(completion)
    layout = parse_tags(tags)
    if prefilled:
        completion = layout.markers[0] + completion
    s = scan(completion, layout, min_chars, min_answer_chars)
    if mode == "incremental":
        return incremental_score(s, penalize_trailing)
    if mode == "soft":
        return soft_score(s)
    if mode == "strict":
        return strict_score(s)
    raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")


def validate_params(params: dict) -> None:
    """Raise ValueError, with a sentence naming the value, for parameters ``xml_format_reward`` cannot work with."""
    parse_tags(params["tags"])
    for name in ("min_chars", "min_answer_chars"):
        if params[name] < 1:
            raise ValueError(f"{name} must be 1 or more (an element needs some real text), got {params[name]}")


def gold_completion(
    tags: str = DEFAULT_TAGS,
    prefilled: bool = False,
    min_chars: int = DEFAULT_MIN_CHARS,
    min_answer_chars: int = DEFAULT_MIN_ANSWER_CHARS,
) -> str:
    """A clean structure for ``tags`` with enough real text in each element: scores 1.0 in every mode."""
    layout = parse_tags(tags)
    names = layout.names
    sentence = "Let me work through this step by step."  # 30 content characters
    contents = []
    for element, need in enumerate(minimums(layout, min_chars, min_answer_chars)):
        last_answer = element == len(names) - 1 and len(names) > 1
        content = "42" if last_answer else sentence
        while content_chars(content, need) < need:
            content += " " + ("42" if last_answer else sentence)
        contents.append(content)
    text = "\n".join(f"<{name}>\n{content}\n</{name}>" for name, content in zip(names, contents))
    return text[len(f"<{names[0]}>") :] if prefilled else text
