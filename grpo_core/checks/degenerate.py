"""Completions that do not do the task: what the degenerate property tries, and the kit a reward's own
``RewardChecks(degenerate=...)`` is built from (public through ``grpo_core.testing``).

Every public helper returns a list of ``(label, completion)`` pairs, the shape ``degenerate`` returns, so a
plugin joins the ones that fit its task::

    def _degenerate(prompt, columns, params):
        from grpo_core.testing import copied_prompt, placeholders, prompt_numbers

        answer = "<answer>{}</answer>"
        return [*copied_prompt(prompt, answer), *prompt_numbers(prompt, answer), *placeholders(("answer",))]

The degenerate property (``grpo_core.checks.audit``) tries ``generic_degenerate``, ``padding_to`` and
``attacks`` on every reward, declared or not; ``attacks`` pairs each completion with a control it must outscore
to count as paid (``generic_attacks`` is the same without them). This module imports nothing but ``re`` and the
project's number reader (the standard library alone), so plugins can use it at no cost.
"""

from __future__ import annotations

import re

from grpo_core.answers.numbers import parse_plain_number

ZERO_WIDTH_SPACE = "\u200b"
# Characters that render as nothing or as a blank: Hangul fillers (which Python's \w counts as letters),
# zero-width characters, and private-use code points (no glyph in ordinary fonts).
HANGUL_FILLERS = "\u3164\u115f\u1160\uffa0"
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
PRIVATE_USE_START = 0xE000
SPRAY_RANGE = (0, 199)  # every integer in it: covers the answers of most generated arithmetic
FILLER_SIZE = 40  # characters of content-free text in each tag: more than any format's minimum content
# A filler sentence with no digits, tags or answer words, so it never does a task by accident.
FILLER_SENTENCE = "This step restates what was said before. "
PADDING_SIZE = 1000  # characters: longer than any ordinary completion the checks draw
# What the generic completions are, in words: the degenerate property's promise and report say it.
GENERIC_ATTACKS = ("empty, whitespace, the prompt copied back, padding, repetition, number sprays, the gold among "
                   "other numbers, blank-rendering characters, near-repeats, content-free text in tags")

_NUMBER = r"\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?%?"
_OPERATOR = r"(?:\\times|\\div|\\cdot|[-+*/^×÷·])"
# A run of numbers, operators, brackets and spaces: where an expression can be.
_SPAN = re.compile(r"(?:\\times|\\div|\\cdot|[\d.,%+\-*/^×÷·()\[\]\s])+")
_HAS_EXPRESSION = re.compile(rf"{_NUMBER}\s*\)*\s*{_OPERATOR}\s*\(*\s*-?{_NUMBER}")


def _fill(template: str, text: str) -> str:
    # str.replace, not str.format: the text may hold braces (LaTeX, JSON).
    return template.replace("{}", text) if "{}" in template else template + text


def _clip_label(text: str, limit: int = 30) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def empty_completions() -> list[tuple[str, str]]:
    """The empty completion, whitespace only, and zero-width spaces only: no content at all."""
    return [
        ("empty", ""),
        ("whitespace only", " \n\t \n"),
        ("zero-width spaces only", ZERO_WIDTH_SPACE * 8),
    ]


def copied_prompt(prompt: str, template: str = "{}") -> list[tuple[str, str]]:
    """The prompt copied back, and its last line when the prompt has several, each put in ``template``.

    ``template`` places the copy, e.g. ``"<answer>{}</answer>"``; ``{}`` marks where it goes.
    An empty prompt gives no completions.
    """
    prompt = (prompt or "").strip()
    if not prompt:
        return []
    pairs = [("the prompt copied back", _fill(template, prompt))]
    lines = [line.strip() for line in prompt.splitlines() if line.strip()]
    if len(lines) > 1:
        pairs.append(("the prompt's last line copied back", _fill(template, lines[-1])))
    return pairs


def prompt_expressions(prompt: str) -> list[str]:
    """The arithmetic expressions written in ``prompt`` (``4 + 18``, ``7 \\times 8``, ``(9+1)``), in order."""
    found = []
    for match in _SPAN.finditer(prompt or ""):
        span = match.group().strip().rstrip(".,").strip()
        while span.count("(") > span.count(")") and span.startswith("("):
            span = span[1:].strip()
        while span.count(")") > span.count("(") and span.endswith(")"):
            span = span[:-1].strip()
        if _HAS_EXPRESSION.search(span) and span not in found:
            found.append(span)
    return found


def prompt_numbers(prompt: str, template: str = "{}", limit: int = 8, exclude=()) -> list[tuple[str, str]]:
    """The prompt's own expressions and numbers, each put in ``template``: answers copied, not computed.

    For ``What is 4 + 18?`` with ``template="<answer>{}</answer>"``: ``<answer>4 + 18</answer>``,
    ``<answer>4</answer>`` and ``<answer>18</answer>``. At most ``limit`` completions. Numbers
    in ``exclude`` (such as the gold answer: in ``What is 0 + 7?`` copying 7 is right) are left out;
    compare more loosely by filtering the result with your reward's own number comparison.
    """
    prompt = prompt or ""
    skip = {str(value).strip() for value in exclude}
    pairs = [(f"an expression from the prompt, {_clip_label(e)}", _fill(template, e)) for e in prompt_expressions(prompt)]
    numbers = [n for n in dict.fromkeys(m.group() for m in re.finditer(_NUMBER, prompt)) if n not in skip]
    pairs += [(f"a number from the prompt, {_clip_label(n)}", _fill(template, n)) for n in numbers]
    return pairs[:limit]


def placeholders(tags, fillers=("", ".", ZERO_WIDTH_SPACE, "...", "answer"), separator: str = "\n") -> list[tuple[str, str]]:
    """The expected tag structure with placeholder content: ``<reasoning>.</reasoning>\\n<answer>.</answer>``.

    ``tags`` are the element names in order, e.g. ``("reasoning", "answer")``; each filler gives
    one completion with that filler in every element (the empty one is the bare structure).
    """
    names = [tags] if isinstance(tags, str) else list(tags)
    pairs = []
    for filler in fillers:
        text = separator.join(f"<{name}>{filler}</{name}>" for name in names)
        if filler == "":
            label = "the tag structure, empty"
        elif filler.strip(ZERO_WIDTH_SPACE) == "":
            label = "the tag structure with a zero-width space in each tag"
        else:
            label = f"the tag structure with {filler!r} in each tag"
        pairs.append((label, text))
    return pairs


def padded(text: str, size: int = PADDING_SIZE) -> list[tuple[str, str]]:
    """``text`` padded to ``size`` characters with spaces, with newlines and with zero-width spaces."""
    text = text or ""
    missing = max(0, size - len(text))
    what = f"{_clip_label(text)} padded" if text else "padding"
    return [
        (f"{what} with spaces to {size:,} characters", text + " " * missing),
        (f"{what} with newlines to {size:,} characters", text + "\n" * missing),
        (f"{what} with zero-width spaces to {size:,} characters", text + ZERO_WIDTH_SPACE * missing),
    ]


def repeated(text: str, size: int = PADDING_SIZE) -> list[tuple[str, str]]:
    """``text``, its first word and its first character, each repeated to at least ``size`` characters."""
    text = text or ""
    if not text.strip():
        return []
    pairs = [(f"{_clip_label(text)} repeated to {size:,} characters", _repeat(text, size))]
    word = text.split()[0]
    if word != text:
        pairs.append((f"the word {_clip_label(word)} repeated to {size:,} characters", _repeat(word + " ", size)))
    first = text.strip()[0]
    if first != text:
        pairs.append((f"the character {first!r} repeated to {size:,} characters", first * size))
    return pairs


def _repeat(unit: str, size: int) -> str:
    return (unit * max(1, -(-size // len(unit))))[:max(size, len(unit))]


def generic_degenerate(prompt: str = "", size: int = PADDING_SIZE) -> list[tuple[str, str]]:
    """What the checks try on every reward: empty and whitespace, the prompt copied back, padding, repetition.

    ``prompt`` is the row's prompt as text (empty when the row has none); ``size`` is the padded length.
    """
    pairs = empty_completions() + copied_prompt(prompt)
    pairs.append((f"spaces to {size:,} characters", " " * size))
    pairs.append((f"one letter repeated to {size:,} characters", "a" * size))
    pairs += repeated(FILLER_SENTENCE, size)[:1]
    if (prompt or "").strip():
        pairs.append((f"the prompt repeated to {size:,} characters", _repeat(prompt.strip() + "\n", size)))
    return pairs


def padding_to(size: int) -> list[tuple[str, str]]:
    """Content-free completions exactly ``size`` characters long: spaces, one letter, a filler sentence.

    The checks use them at the lengths of real completions (the gold, drawn text), which catches a reward that
    pays length (or closeness to a target length) whatever the length is made of.
    """
    if size <= 0:
        return []
    return [
        (f"spaces to {size:,} characters (as long as a real completion)", " " * size),
        (f"one letter repeated to {size:,} characters (as long as a real completion)", "a" * size),
        (f"a filler sentence repeated to {size:,} characters (as long as a real completion)",
         _repeat(FILLER_SENTENCE, size)[:size]),
    ]


def _numbers_in(template: str, numbers: list[str], each: bool = False) -> str:
    if each:
        return " ".join(template.replace("{}", n) for n in numbers)
    return template.replace("{}", " ".join(numbers))


# Where a spray goes: (words for the label, template, one number per template or all in one).
_SPRAY_PLACES = (("in prose", "{}", False), ("in the answer tag", "<answer>{}</answer>", False),
                 ("each in \\boxed{}", "$\\boxed{{}}$", True))


def _spray_triples(numbers: list[str], what: str, control: str) -> list[tuple[str, str, str]]:
    return [(f"{what} {where}", _numbers_in(template, numbers, each), _numbers_in(template, [control], each))
            for where, template, each in _SPRAY_PLACES]


def _written(values) -> list[str]:
    """``values`` as text, and a whole number written otherwise (``10.0``, ``+10``, ``1e1``) also as the integer
    (``10``), read as the project's answers are (``grpo_core.parse_number``)."""
    out = []
    for value in values:
        text = str(value).strip()
        out.append(text)
        number = parse_plain_number(text, units=False) if text else None
        whole = number.value if number is not None and not number.percent else None
        if whole is not None and whole.denominator == 1:
            out.append(str(whole.numerator))
    return [text for text in dict.fromkeys(out) if text]


def _keep_inside(numbers: list[str], inside) -> list[str]:
    """``numbers`` with the values in ``inside`` moved from the ends to the middle: a reward that reads the first
    or the last number must not be paid by the spray's order (``0.0`` is the spray's first number, ``0``)."""
    inside = set(_written(inside))
    ends = [n for n in (numbers[:1] + numbers[-1:]) if n in inside]
    rest = [n for n in numbers if n not in ends]
    middle = len(rest) // 2
    return rest[:middle] + ends + rest[middle:]


def _control(numbers: list[str], avoid) -> str:
    """One number of the spray that is none of the ``avoid`` values and contains none of them, with two different
    digits (as much content as a format asks of an answer): a single wrong candidate, to tell paying for the
    spray from paying any number in that place."""
    avoid = _written(avoid)
    fits = [n for n in numbers if not any(a in n for a in avoid)]
    return next((n for n in fits if len(set(n.lstrip("-"))) > 1), fits[0] if fits else "-1")


def spray_attacks(low: int = SPRAY_RANGE[0], high: int = SPRAY_RANGE[1], inside=()) -> list[tuple[str, str, str]]:
    """``number_sprays`` as (label, completion, control): the control is one wrong number in the same place."""
    numbers = _keep_inside([str(n) for n in range(low, high + 1)], inside)
    return _spray_triples(numbers, f"every integer from {low} to {high}", _control(numbers, inside))


def number_sprays(low: int = SPRAY_RANGE[0], high: int = SPRAY_RANGE[1], inside=()) -> list[tuple[str, str]]:
    """Every integer from ``low`` to ``high`` at once: in prose, in the answer tag, and each in ``\\boxed{}``.

    A reward that pays one of them for a gold answer in the range pays for guessing everything, not answering.
    Values in ``inside`` (the gold answers) are never first or last.
    """
    return [(label, text) for label, text, _ in spray_attacks(low, high, inside)]


def buried_attacks(gold, spread: int = 60) -> list[tuple[str, str, str]]:
    """``buried_gold`` as (label, completion, control): the control is one of the other numbers alone."""
    gold = str(gold if gold is not None else "").strip()
    if len(gold) > 40 or not re.fullmatch(rf"-?{_NUMBER}(?:/\d+)?", gold):
        return []  # among numbers only a number is one candidate of many; other noise a checker may rightly skip
    centre = int(gold) if re.fullmatch(r"-?\d{1,12}", gold) else spread
    others = [str(n) for n in range(centre - spread, centre + spread + 1) if str(n) != gold]
    numbers = others[:len(others) // 2] + [gold] + others[len(others) // 2:]
    what = f"the gold {_clip_label(gold)} buried among {len(others)} other numbers"
    return _spray_triples(numbers, what, _control(others, [gold]))


def buried_gold(gold, spread: int = 60) -> list[tuple[str, str]]:
    """``gold`` in the middle of other numbers, in prose, in the answer tag and each in ``\\boxed{}``: a list of
    candidates with the right one inside, never first or last. ``gold`` is a row's answer; only a number
    (``42``, ``-3``, ``2.5``, ``3/4``, ``12%``) gives completions."""
    return [(label, text) for label, text, _ in buried_attacks(gold, spread)]


def hedge_attacks(gold, spread: int = 60) -> list[tuple[str, str, str]]:
    """Two boxed answers, the gold and a wrong number, in either order, as (label, completion, control): a reward
    that reads the last (or the first) box pays a policy that boxes two guesses. The control boxes two wrong
    numbers. ``gold`` is a row's answer; only a number gives completions."""
    gold = str(gold if gold is not None else "").strip()
    if len(gold) > 40 or not re.fullmatch(rf"-?{_NUMBER}(?:/\d+)?", gold):
        return []
    centre = int(gold) if re.fullmatch(r"-?\d{1,12}", gold) else spread
    others = [str(n) for n in range(centre - spread, centre + spread + 1) if str(n) != gold]
    wrong = _control(others, [gold, gold.rstrip("%")])
    other = _control([n for n in others if n != wrong], [gold, gold.rstrip("%"), wrong])
    control = f"\\boxed{{{wrong}}} \\boxed{{{other}}}"
    label = _clip_label(gold)
    return [(f"two boxed answers, a wrong one then the gold {label}", f"\\boxed{{{wrong}}} \\boxed{{{gold}}}", control),
            (f"two boxed answers, the gold {label} then a wrong one", f"\\boxed{{{gold}}} \\boxed{{{wrong}}}", control)]


def blank_texts(size: int = PADDING_SIZE) -> list[tuple[str, str]]:
    """Text of ``size`` characters that renders blank: Hangul fillers, zero-width characters, and distinct
    private-use characters (no two alike, so no repetition counter sees a repeat)."""
    if size <= 0:
        return []
    return [
        (f"Hangul filler characters (U+3164 and kin) to {size:,} characters", _repeat(HANGUL_FILLERS, size)[:size]),
        (f"zero-width characters to {size:,} characters", _repeat(ZERO_WIDTH, size)[:size]),
        (f"{size:,} distinct private-use characters", _private_use(size)),
    ]


def _private_use(size: int) -> str:
    return "".join(chr(PRIVATE_USE_START + i % 6400) for i in range(size))


def near_repeats(size: int = PADDING_SIZE) -> list[tuple[str, str]]:
    """Repetition with tiny changes, about ``size`` characters: one letter repeated with a different last letter,
    one word repeated with a different ending, and a sentence repeated with its last letter changed each time."""
    if size < 8:
        return []
    copies = max(2, -(-size // len(FILLER_SENTENCE)))
    sentence = FILLER_SENTENCE.rstrip(" .")
    varied = " ".join(f"{sentence[:-1]}{chr(ord('a') + i % 26)}." for i in range(copies))
    return [
        (f"one letter repeated to {size:,} characters, the last one changed", "a" * (size - 1) + "b"),
        (f"one word repeated to {size:,} characters, the end changed", _repeat("word ", size)[:size - 4] + "end!"),
        (f"a sentence repeated {copies} times, its last letter changed each time", varied),
    ]


def tag_names(*texts: str, limit: int = 3) -> list[tuple[str, ...]]:
    """The tag structures a format may ask for: ``answer``, ``reasoning, answer``, and the element names written
    as ``<name>...</name>`` in ``texts`` (a prompt, a gold completion), in order; at most ``limit``."""
    found: list[tuple[str, ...]] = [("answer",), ("reasoning", "answer")]
    for text in texts:
        names = tuple(dict.fromkeys(re.findall(r"<([A-Za-z][\w-]{0,30})>(?=.*?</\1>)", text or "", re.S)))
        if names and names not in found:
            found.append(names)
    return found[:limit]


def _structure(names, content: str) -> str:
    return "\n".join(f"<{name}>{content}</{name}>" for name in names)


def filler_attacks(tags, size: int = FILLER_SIZE) -> list[tuple[str, str, str]]:
    """``tag_fillers`` as (label, completion, control): the control is the same structure holding one character of
    the filler, so a format whose elements need only one character (an answer may be one digit) is not failed
    for paying it, while a reward that pays the filler's length is."""
    names = [tags] if isinstance(tags, str) else list(tags)
    fillers = (("one letter", "x" * size), ("underscores", "_" * size),
               ("Hangul filler characters", _repeat(HANGUL_FILLERS, size)[:size]),
               ("distinct private-use characters", _private_use(size)))
    where = f"<{names[0]}>" if len(names) == 1 else f"<{', '.join(names)}> each"
    return [(f"{where} filled with {size:,} characters of {what}", _structure(names, filler),
             _structure(names, filler[:1])) for what, filler in fillers]


def tag_fillers(tags, size: int = FILLER_SIZE) -> list[tuple[str, str]]:
    """The tag structure ``tags`` (names in order) with each element holding ``size`` characters of content-free
    text: one letter repeated, underscores, Hangul filler characters, distinct private-use characters."""
    return [(label, text) for label, text, _ in filler_attacks(tags, size)]


ATTACK_PARTS = ("numbers", "texts", "tags")  # sprays and the buried gold; blank and near-repeated text; tag fillers


def attacks(prompt: str = "", columns: dict | None = None, examples=(), size: int = PADDING_SIZE,
            lengths=(), parts=ATTACK_PARTS) -> list[tuple[str, str, str]]:
    """``generic_attacks`` as (label, completion, control): the attack counts as paid only when it also scores
    above its control (the same place with one wrong number, two wrong boxed numbers, the tags holding one
    character, or the empty completion).
    ``parts`` picks some of ``ATTACK_PARTS``."""
    values = [v for v in (columns or {}).values() if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
    triples = []
    if "tags" in parts:
        for tags in tag_names(prompt, *examples):
            triples += filler_attacks(tags, FILLER_SIZE)
    if "texts" in parts:
        for n in dict.fromkeys(lengths or (size,)):
            triples += [(label, text, "") for label, text in blank_texts(n) + near_repeats(n)]
    if "numbers" in parts:
        triples += spray_attacks(inside=values)
        for value in values:
            triples += buried_attacks(value) + hedge_attacks(value)
    return triples


def generic_attacks(prompt: str = "", columns: dict | None = None, examples=(), size: int = PADDING_SIZE,
                    lengths=()) -> list[tuple[str, str]]:
    """What the checks try on every reward besides ``generic_degenerate``: the tags a format may ask for
    (``answer``, ``reasoning, answer``, and those written in ``prompt`` or the completions ``examples``) filled
    with content-free text, blank-rendering text, near-repeats, number sprays, and each short value of the row's
    ``columns`` (a gold answer) buried among other numbers and boxed beside a wrong one. ``lengths`` are lengths
    of real completions: the blank and near-repeated texts come at those lengths (at ``size`` without them)."""
    return [(label, text) for label, text, _ in attacks(prompt, columns, examples, size, lengths)]
