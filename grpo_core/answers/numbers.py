"""Plain numbers read and compared exactly, without a symbolic library (the math reward's fast path).

Public as ``grpo_core.parse_number`` and ``grpo_core.same_number``, so any plugin that checks a
numeric answer compares it the same way.

A number is kept as its canonical digits and power of ten (``1,234.50`` is ``12345 x 10^-1``),
so equality of any two decimals, however long, needs no big-integer arithmetic; exact
fractions (``Fraction``) are only built when both sides are small enough to be cheap.

What counts as one number written as a number (anything else is not a plain number):

- integers, decimals and scientific notation: ``42``, ``-2.5``, ``.5``, ``1e3``, ``1.2E-7``,
  ``1.2 \\times 10^{-7}``, ``1.2 × 10^-7``;
- a fraction of two integers in lowest terms: ``3/4``, ``-\\frac{3}{4}`` (``8/4`` is an expression);
- thousands separators: a comma, a space, a thin or no-break space, ``{,}`` or ``\\,`` between
  groups of exactly three digits (``1,234``, ``1 234``, ``1\\,234``);
- a decimal comma where it cannot be a thousands separator or a list: one comma followed by two,
  or four or more, digits (``1000,99``, ``2,74``), or after a lone ``0`` (``0,111``, ``0,5``);
  ``1,234`` stays 1234, and ``2,5`` is not a plain number (it may be the list 2, 5);
- decorations: a currency sign (``$5``, ``5 €``), a percent sign (``50%``, ``50 percent``), a
  degree sign, trailing unit words (``12 apples``, ``2.5 \\text{ cm}``), a trailing period, one
  pair of enclosing parentheses, and a ``name =`` label (``x = 5``).

A percent sign is a label, like a unit: ``50%`` is the number 50. It matches ``50`` and ``50%``,
never ``0.5``, so one answer never matches two different values.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Iterator, NamedTuple

# Past these sizes a number is compared by its canonical digits only, never turned into an int.
MAX_EXACT_DIGITS = 300
MAX_EXACT_EXPONENT = 300
# A written exponent longer than this is not read as a number at all ("1e" followed by a novel).
MAX_EXPONENT_CHARS = 9

CURRENCY = "$€£¥₹₩₽"
_SPACES = " \u2009\u202f\u00a0"  # space, thin space, narrow no-break space, no-break space
_UNSIGNED = (
    rf"(?:[1-9]\d{{0,2}}(?:,\d{{3}})+(?:\.\d*)?"  # 1,234.5
    rf"|\d{{1,3}}(?:[{_SPACES}]\d{{3}})+(?:[.,]\d+)?"  # 1 234,5
    rf"|0,\d+|\d+,(?:\d{{2}}|\d{{4,}})(?!\d)"  # decimal commas: 0,111  1000,99  2,74
    rf"|\d+(?:\.\d*)?|\.\d+)"
    rf"(?:[eE][-+]?\d+)?"
)

# A whole answer span that is a plain number: sign, currency, digits, optional /denominator,
# percent, and trailing unit words (after a space, or two or more letters, or a currency sign).
# Each run of spaces before the number can be matched one way only, so a failing match stays linear.
_PLAIN = re.compile(
    rf"""
    (?P<sign1>[-+])?\s*
    (?:(?P<currency>[{CURRENCY}])\s*)?
    (?:(?P<sign2>[-+])\s*)?
    (?P<number>{_UNSIGNED})
    (?:\s*/\s*(?P<den_sign>[-+])?(?P<denominator>\d+))?
    (?P<percent>\s*(?:%|percent\b|per\ cent\b|pct\b))?
    (?P<unit>\s+[^\W\d_][^\d=+*^<>/()\[\]{{}}]{{0,40}}|[^\W\d_]{{2}}[^\d=+*^<>/()\[\]{{}}]{{0,40}}|[²³]|\s*[{CURRENCY}°][^\d=+*^<>/()\[\]{{}}]{{0,40}})?
    """,
    re.VERBOSE,
)

# A number inside prose: not glued to a preceding letter, digit or dot ("x2", "v1.5" are not numbers).
NUMBER_TOKEN = re.compile(
    rf"""
    (?<![\w.])
    (?P<sign1>-)?
    (?P<currency>[{CURRENCY}])?
    (?P<sign2>-)?
    (?P<number>(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+)
    (?:/(?P<denominator>\d+)(?![\d.,]\d))?
    (?P<percent>\s?%)?
    """,
    re.VERBOSE,
)

# LaTeX decorations a plain number may carry inside \boxed{} or an answer tag.
_LATEX_FRACTION = re.compile(
    r"\\[dtc]?frac\s*\{\s*([-+]?\s*[\d.,]+)\s*\}\s*\{\s*([-+]?\s*[\d.,]+)\s*\}|\\[dtc]?frac\s*(\d)\s*(\d)"
)
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textrm|textit|textnormal|mathrm|mathbf|mbox|operatorname)\s*\{([^{}\\]*)\}")
_LATEX_SPACES = re.compile(r"\\[,;: ]|\\q?quad\b|~")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\degree\b")
# Starts only where a run of digits and dots starts (every later start would end alike), so it stays linear.
_SCIENTIFIC = re.compile(
    r"(?<![\d.])(\d(?:[\d.]*\d)?)\s*(?:\\times|\\cdot|[×·*xX])\s*10\s*\^\s*(?:\{\s*([-+−]?\s*\d+)\s*\}|([-+−]?\d+))"
)
_RELATIONS = re.compile(r"[<>≤≥≠]|\\[lg]eq?\b|\\neq?\b|!=")
_ARITHMETIC = re.compile(r"[\d\s.+\-*/()×÷]+|\s*\\[dt]?frac\{\d+\}\{\d+\}\s*")
# What may stand before "=" in "x = 5": a name (x, x_1, \alpha, f(x), \text{total}), or plain arithmetic.
_NAME = re.compile(r"\s*(?:[A-Za-z]\w*(?:_\{?\w+\}?)?(?:\([^()]*\))?|\\[A-Za-z]+|\\text\{[^{}]*\}|[\d\s.+\-*/()×÷]+)\s*")
_DELIMITERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))


class Number(NamedTuple):
    """A plain number: an exact canonical ``key`` and whether it carried a percent sign.

    ``key`` is ``("decimal", negative, digits, exponent)`` (value = digits x 10^exponent, digits
    without leading or trailing zeros), ``("fraction", numerator, denominator)`` in lowest terms,
    or ``("unreadable",)`` for a number too large to read, which equals nothing.
    """

    key: tuple
    percent: bool = False

    @property
    def value(self) -> Fraction | None:
        """The exact value, or None when it is too large to compute cheaply."""
        kind = self.key[0]
        if kind == "fraction":
            return Fraction(self.key[1], self.key[2])
        if kind != "decimal":
            return None
        _, negative, digits, exponent = self.key
        if not digits:
            return Fraction(0)
        if len(digits) > MAX_EXACT_DIGITS or abs(exponent) > MAX_EXACT_EXPONENT:
            return None
        numerator = -int(digits) if negative else int(digits)
        return Fraction(numerator * 10**exponent) if exponent >= 0 else Fraction(numerator, 10**-exponent)

    def plain(self) -> str:
        """The number as plain text (``3/4``, ``-2.5``, ``1e999``, ``50%``), as the prose fast path reads it."""
        return self._text(latex=False)

    def latex(self) -> str:
        """The number written for math-verify (``\\frac{3}{4}``, ``1\\times10^{999}``, ``50\\%``)."""
        return self._text(latex=True)

    def _text(self, latex: bool) -> str:
        kind = self.key[0]
        if kind == "decimal":
            _, negative, digits, exponent = self.key
            if digits and abs(exponent) > MAX_EXACT_EXPONENT:
                text = f"{digits}\\times10^{{{exponent}}}" if latex else f"{digits}e{exponent}"
            else:
                text = _decimal_text(digits, exponent)
        elif kind == "fraction":
            _, numerator, denominator = self.key
            negative = numerator < 0
            if denominator == 1:
                text = str(abs(numerator))
            else:
                text = f"\\frac{{{abs(numerator)}}}{{{denominator}}}" if latex else f"{abs(numerator)}/{denominator}"
        else:
            return ""
        text = ("-" if negative and text != "0" else "") + text
        return text + (("\\%" if latex else "%") if self.percent else "")


def _decimal_text(digits: str, exponent: int) -> str:
    if not digits:
        return "0"
    if exponent >= 0:
        return digits + "0" * exponent
    if -exponent >= len(digits):
        return "0." + "0" * (-exponent - len(digits)) + digits
    return digits[:exponent] + "." + digits[exponent:]


def _decimal(text: str, negative: bool) -> Number | None:
    """Canonical form of an unsigned decimal such as ``1,234.50``, ``1 000,5`` or ``1e3``; None if unreadable."""
    for space in _SPACES:
        text = text.replace(space, "")
    if "," in text and "." not in text and not re.fullmatch(r"[1-9]\d{0,2}(?:,\d{3})+(?:[eE].*)?", text):
        text = text.replace(",", ".")  # a decimal comma (the pattern only lets unambiguous ones through)
    text = text.replace(",", "")
    mantissa, _, exponent_text = text.lower().partition("e")
    if len(exponent_text.lstrip("+-")) > MAX_EXPONENT_CHARS:
        return None
    exponent = int(exponent_text) if exponent_text else 0
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    exponent -= len(fraction)
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped
    if not digits:
        return Number(("decimal", False, "", 0))
    return Number(("decimal", negative, digits, exponent))


def _integer(text: str, negative: bool) -> Number:
    """``_decimal`` for ASCII digits only: the same canonical form, without its checks."""
    digits = text.lstrip("0")
    stripped = digits.rstrip("0")
    if not stripped:
        return Number(("decimal", False, "", 0))
    return Number(("decimal", negative, stripped, len(digits) - len(stripped)))


def _build(groups: dict) -> Number | None:
    if groups.get("sign1") and groups.get("sign2"):
        return None
    negative = "-" in ((groups.get("sign1") or "") + (groups.get("sign2") or ""))
    number = _decimal(groups["number"], negative)
    if number is None:
        return None
    percent = bool(groups.get("percent"))
    denominator_text = groups.get("denominator")
    if denominator_text:
        if not groups["number"].isdigit():
            return None  # 1.5/2 is an expression, not a fraction
        top, bottom = int(groups["number"]), int(denominator_text)
        if groups.get("den_sign"):
            return None
        if bottom == 0 or math.gcd(top, bottom) != 1 and top != 0 or top == 0 and bottom != 1:
            return None  # only a fraction in lowest terms is a number; 8/4 and 0/5 are expressions
        value = Fraction(-top if negative else top, bottom)
        return Number(("fraction", value.numerator, value.denominator), percent)
    return Number(number.key, percent)


def normalize_latex_number(text: str) -> str | None:
    """Strip the LaTeX a plain number may carry (``\\$5``, ``\\frac{3}{4}``, ``5\\%``, ``\\text{ cm}``).

    Returns None when other LaTeX remains, so the span goes to the symbolic tier.
    """
    text = _undelimited(text)
    text = _SCIENTIFIC.sub(_scientific_text, text)
    if "\\" not in text and "{" not in text and "^" not in text:
        return text
    text = text.replace("\\$", "$").replace("\\%", "%")
    text = text.replace("\\left", "").replace("\\right", "").replace("\\displaystyle", "")
    text = re.sub(r"(?<!\s)\s*\{\s*,\s*\}\s*", ",", text)  # 14{,}916 and 14 {, }916 (from a run's start: linear)
    text = re.sub(r"\\!\s*", "", text)  # 32,\! 349: a negative space inside a grouped number
    text = _DEGREES.sub("°", text)
    text = _LATEX_SPACES.sub(" ", text)
    text = _LATEX_TEXT.sub(lambda m: " " + m.group(1), text)
    # Spaces keep a mixed number 2\frac{1}{3} from reading as 21/3: "2 1/3" is not a plain number.
    text = _LATEX_FRACTION.sub(_fraction_text, text)
    if "\\" in text or "{" in text or "}" in text or "^" in text:
        return None
    return text


def _undelimited(text: str) -> str:
    text = text.strip()
    for start, end in _DELIMITERS:
        if len(text) > len(start) + len(end) and text.startswith(start) and text.endswith(end):
            return text[len(start) : -len(end)].strip()
    return text


def _scientific_text(match: re.Match) -> str:
    exponent = (match.group(2) or match.group(3)).replace(" ", "").replace("\u2212", "-")
    return f"{match.group(1)}e{exponent}"


def _fraction_text(match: re.Match) -> str:
    if match.group(1) is not None:
        return f" {match.group(1).replace(' ', '')}/{match.group(2).replace(' ', '')} "
    return f" {match.group(3)}/{match.group(4)} "


def parse_plain_number(text: str, units: bool = True) -> Number | None:
    """The number a whole answer span states, or None if the span is not one number written as a number.

    Reads integers, decimals, scientific notation, signs, a fraction in lowest terms (``3/4``,
    ``\\frac{3}{4}``), thousands separators (``1,234``, ``1 234``), unambiguous decimal commas
    (``1000,99``), ``$5``, ``50%``, a ``x =`` label, one pair of enclosing parentheses, trailing
    periods and (with ``units``) trailing unit words such as ``12 apples.``. An expression such as
    ``4 + 18``, ``7 \\times 8`` or ``8/4`` is not a plain number, whatever its value.
    Public as ``grpo_core.parse_number``.
    """
    text = text.strip()
    if text.isascii():  # the common cases, an integer with or without a minus sign, without the regexes
        if text.isdigit():
            return _integer(text, False)
        if text[:1] == "-" and text[1:].isdigit():
            return _integer(text[1:], True)
    text = text.replace("\u2212", "-").replace("\u2009", " ").replace("\u202f", " ").replace("\u00a0", " ")
    text = _undelimited(text)
    if "\\approx" in text:  # "x = 1/3 \\approx 0.33": the exact value is the answer, else the approximation
        for part in text.split("\\approx"):  # the first value that reads, without recursing once per \approx
            number = parse_plain_number(part, units)
            if number is not None:
                return number
        return None
    if "=" in text:  # "x = 5": the value after the last "=" is the answer
        parts = text.split("=")
        if _RELATIONS.search(text) or not _NAME.fullmatch(parts[0]):
            return None
        if any(not _ARITHMETIC.fullmatch(part) for part in parts[1:-1]):
            return None  # "AB = 4, CD = 5" is a list of equations, not one value
        text = text.rpartition("=")[2]
    text = normalize_latex_number(text)
    if text is None:
        return None
    text = text.strip().rstrip(".!;").strip()
    if text.startswith("(") and text.endswith(")") and "," not in text:
        text = text[1:-1].strip()
    match = _PLAIN.fullmatch(text)
    if match is None:
        return None
    if match.group("unit") and not units:
        return None
    return _build(match.groupdict())


def parse_number_token(match: re.Match) -> Number | None:
    """The Number for a NUMBER_TOKEN match."""
    return _build(match.groupdict())


def same_number(gold: Number, prediction: Number, *, rel_tol: float = 0.0) -> bool:
    """Whether two numbers are equal: exactly (as rationals), or within ``rel_tol`` of the gold value.

    With ``rel_tol=0`` (the default) ``0.30`` equals ``0.3``, ``1/4`` equals ``0.25`` and ``1e3``
    equals ``1000``, while ``1.2e-7`` never equals ``0`` and ``-3e-7`` never equals ``3e-7``.
    With ``rel_tol > 0`` a prediction matches when ``|prediction - gold| <= rel_tol * |gold|``
    (``rel_tol=1e-3`` accepts ``3.14`` for ``3.14159``). A percent sign is a label: ``50%`` is 50.
    Numbers too large to compute (over 300 digits or a power of ten past 300) compare only exactly.
    Public as ``grpo_core.same_number``.
    """
    a, b = gold.key, prediction.key
    if a[0] == "unreadable" or b[0] == "unreadable":
        return False
    if a == b:
        return True
    if a[0] == b[0] == "decimal" and not rel_tol:
        return False  # canonical keys: different keys are different values
    x, y = gold.value, prediction.value
    if x is None or y is None:
        return False
    if x == y:
        return True
    if rel_tol:
        return abs(y - x) <= Fraction(rel_tol) * abs(x)
    return False


class NumberMatch:
    """One number written in running text, as ``find_numbers`` yields it: ``start``, ``end`` and ``number``."""

    __slots__ = ("_match",)

    def __init__(self, match: re.Match) -> None:
        self._match = match

    @property
    def start(self) -> int:
        return self._match.start()

    @property
    def end(self) -> int:
        return self._match.end()

    @property
    def number(self) -> Number | None:
        """The Number written there, or None when it cannot be read (such as ``1e99999999999``)."""
        return parse_number_token(self._match)


def find_numbers(text: str, start: int = 0) -> Iterator[NumberMatch]:
    """The numbers written in running text from ``start`` on, in order (``"x2"`` and ``"v1.5"`` are not numbers).

    Reads signs, currency signs, thousands separators, decimals, scientific notation, ``3/4`` and a
    trailing ``%``. Each match is read into a Number only when its ``number`` is asked for.
    Public as ``grpo_core.find_numbers``.
    """
    return (NumberMatch(match) for match in NUMBER_TOKEN.finditer(text, start))
