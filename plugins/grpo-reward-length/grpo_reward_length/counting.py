"""What counts toward a completion's length: visible text, each repeated unit or stretch once.

The rule, in order:

1. Invisible characters count nothing: format characters (Unicode category Cf: zero-width
   spaces and joiners, soft hyphens, direction marks, byte-order marks), control characters,
   private-use and unassigned code points, every other default-ignorable code point (Hangul
   fillers, variation selectors) and the blank Braille pattern.
2. Whitespace counts as one space per run, and nothing at the start or end.
3. The text is split into segments at line breaks and after sentence ends (``.``, ``!``, ``?``
   followed by whitespace). A segment that is one unit repeated (``aaaa``, ``hahaha``,
   ``word word word``; at least five thirds of a copy, the last possibly cut short) counts as
   that unit once, and a segment seen before in the completion counts nothing, nor does a
   last segment that is the start of an earlier one (a repetition cut off at some length).
4. What is left is counted in grapheme clusters (``regex``'s ``\\X``): an emoji with skin tone,
   a flag or a letter with combining accents is one character.
5. A character inside a stretch of ``REPEAT_SPAN`` or more characters that already appeared
   earlier in what is left counts nothing, as a compressor copies it instead of storing it:
   ``'a' * 199 + 'b'`` counts 2, a sentence repeated with its last character changed counts
   about one copy. So do fewer than ``EDIT_GAP`` characters between two such stretches: a sentence
   repeated with one letter changed in each copy counts about one copy too.

Everything here is linear in the text or bounded: the shortest repeated unit of a long
segment is found with ``str.find`` on the doubled segment, and rule 5 looks each stretch of
``REPEAT_SPAN`` characters up once in a dictionary.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Characters that render as nothing but are not category Cf (the Hangul fillers are also default-ignorable).
BLANK_FILLERS = "\u115f\u1160\u3164\uffa0\u2800"
# Ordinary text seldom repeats 32 characters: of the passages in benchmarks/bench_length.py, 62 of 4,811
# at 200 characters and 191 of 3,583 at 1,000 lose more than 0.05 of score, by repeating a phrase or a rule.
REPEAT_SPAN = 32
EDIT_GAP = 8  # fewer characters than this between two copied stretches are an edit of a copy, counted as copied
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+")
KMP_LIMIT = 20_000  # segments up to this long also lose a final, cut-short copy of their unit


@lru_cache(maxsize=1)
def _invisible():
    import regex

    # Format, control, surrogate, private-use, unassigned and default-ignorable characters and blank
    # fillers, except whitespace (kept for the split).
    return regex.compile(
        rf"[[\p{{Cf}}\p{{Cc}}\p{{Cs}}\p{{Co}}\p{{Cn}}\p{{Default_Ignorable_Code_Point}}{BLANK_FILLERS}]--\s]", regex.V1)


def visible_text(text: str) -> str:
    """``text`` without invisible characters (rule 1); whitespace is kept for the segment split."""
    if text.isascii() and text.isprintable():
        return text
    return _invisible().sub("", text)


def segments(text: str) -> list[str]:
    """The segments of ``text`` (rule 3's split), each with its whitespace runs as single spaces."""
    found = []
    for piece in _SENTENCE_END.split(visible_text(text)):
        piece = " ".join(piece.split())
        if piece:
            found.append(piece)
    return found


def repeated_unit(segment: str) -> str:
    """The shortest unit that ``segment`` repeats (at least twice), or ``segment`` itself."""
    if len(segment) > KMP_LIMIT:
        period = (segment + segment).find(segment, 1)  # whole copies only: C speed on any length
        return segment[:period]
    # Prefix function (KMP): the shortest period, with a cut-short last copy allowed.
    border = [0] * len(segment)
    k = 0
    for i in range(1, len(segment)):
        while k and segment[i] != segment[k]:
            k = border[k - 1]
        if segment[i] == segment[k]:
            k += 1
        border[i] = k
    period = len(segment) - border[-1]
    # Five thirds of a copy or more: "word word" is "word" repeated, "that is that" is left alone.
    return segment[:period] if 5 * period <= 3 * len(segment) else segment


def counted_units(text: str) -> list[str]:
    """The pieces of ``text`` that count toward its length, in order (rules 1 to 3)."""
    seen, kept = set(), []
    for segment in segments(text):
        unit = repeated_unit(segment).strip()
        if unit and unit not in seen:
            seen.add(unit)
            kept.append(unit)
    # Padding cut off at a length leaves a start of an earlier segment at the end: it repeats, too.
    if len(kept) > 1 and any(unit.startswith(kept[-1]) for unit in kept[:-1]):
        kept.pop()
    return kept


def graphemes(text: str) -> int:
    """User-perceived characters in ``text`` (grapheme clusters)."""
    if text.isascii():  # one character each, except CR LF, which is one cluster
        return len(text) - text.count("\r\n")
    import regex

    return len(regex.findall(r"\X", text))


def symbols(text: str) -> str:
    """``text`` with each grapheme cluster of several code points replaced by one private-use character.

    Rule 1 removed private-use characters, so the stand-ins cannot meet a real one: the result has one
    character per cluster, and two clusters are the same character exactly when they are the same text.
    """
    if text.isascii():  # whitespace runs are single spaces by now, so no CR LF is left
        return text
    import regex

    stand_ins: dict[str, str] = {}
    return "".join(cluster if len(cluster) == 1 else stand_ins.setdefault(cluster, chr(0xF0000 + len(stand_ins)))
                   for cluster in regex.findall(r"\X", text))


def copied_chars(text: str, span: int = REPEAT_SPAN, gap: int = EDIT_GAP) -> int:
    """Characters of ``text`` inside a stretch of ``span`` or more that already appeared earlier, or in a gap of
    fewer than ``gap`` characters between two such stretches (rule 5).

    A stretch may overlap the earlier one it copies, as in ``aaaa``: a compressor copies those too. A short
    gap between copies is an edit of one copy, as in a sentence repeated with one letter changed each time.
    """
    first: dict[str, int] = {}
    copied, end = 0, -1  # end: where the last copied stretch ended (-1: none yet)
    for start in range(len(text) - span + 1):
        if first.setdefault(text[start : start + span], start) != start:
            if end >= 0 and 0 < start - end < gap:
                copied += start - end  # the edit between two copies
            copied += start + span - max(start, end)  # only what an earlier copied stretch did not cover
            end = start + span
    return copied


def effective_length(text: str) -> int:
    """The length in characters that counts (rules 1 to 5); kept pieces are joined by one space."""
    kept = symbols(" ".join(counted_units(text)))
    return len(kept) - copied_chars(kept)


def counted_share(text: str) -> float:
    """The share of ``text``'s tokens that count toward its length (0.0 for blank text): the share of its visible
    characters that count, times the share of its UTF-8 bytes that are visible, since a tokenizer spends tokens
    on an invisible character in proportion to its bytes (a Hangul filler is three), not as one character."""
    visible = visible_text(text)
    total = graphemes(visible)
    if not total:
        return 0.0
    share = min(1.0, effective_length(text) / total)
    if visible is text:
        return share
    return share * len(visible.encode("utf-8", "surrogatepass")) / len(text.encode("utf-8", "surrogatepass"))
