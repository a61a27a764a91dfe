"""Plain numbers read and compared without a symbolic library (the math reward's fast path).

Public as ``grpo_core.parse_number`` and ``grpo_core.same_number``, so any plugin that checks a
numeric answer compares it the same way.

A number is kept as its canonical digits and power of ten (``1,234.50`` is ``12345 x 10^-1``),
so equality of any two decimals, however long, needs no big-integer arithmetic; exact
fractions (``Fraction``) are only built when both sides are small enough to be cheap.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

# Past these sizes a number is compared by its canonical digits only, never turned into an int.
MAX_EXACT_DIGITS = 300
MAX_EXACT_EXPONENT = 300
# A written exponent longer than this is not read as a number at all ("1e" followed by a novel).
MAX_EXPONENT_CHARS = 9
# As math-verify does, a decimal matches a value that agrees with it to this many places (0.333333 = 1/3).
ROUND_PLACES = 6

CURRENCY = "$€£¥₹₩₽"
_UNSIGNED = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?"

# A whole answer span that is a plain number: sign, currency, digits, optional /denominator,
# percent, and trailing unit words (after a space, or two or more letters, or a currency sign).
_PLAIN = re.compile(
    rf"""
    (?P<sign1>[-+])?\s*
    (?P<currency>[{CURRENCY}])?\s*
    (?P<sign2>[-+])?\s*
    (?P<number>{_UNSIGNED})
    (?:\s*/\s*(?P<den_sign>[-+])?(?P<denominator>{_UNSIGNED}))?
    (?P<percent>\s*(?:%|percent\b|per\ cent\b))?
    (?P<unit>\s+[^\W\d_][^\d=+*^<>/]{{0,40}}|[^\W\d_]{{2}}[^\d=+*^<>/]{{0,40}}|\s*[{CURRENCY}°][^\d=+*^<>/]{{0,40}})?
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
    r"\\[dt]?frac\s*\{\s*([-+]?\s*[\d.,]+)\s*\}\s*\{\s*([-+]?\s*[\d.,]+)\s*\}|\\[dt]?frac\s*(\d)\s*(\d)"
)
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textrm|mathrm|mathbf|mbox|operatorname)\s*\{([^{}\\]*)\}")
_LATEX_SPACES = re.compile(r"\\[,;:! ]|\\q?quad\b|~")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\degree\b")
_DELIMITERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))


class Number(NamedTuple):
    """A plain number: an exact canonical ``key`` and how it was written.

    ``key`` is ``("decimal", negative, digits, exponent)`` (value = digits x 10^exponent, digits
    without leading or trailing zeros), ``("fraction", numerator, denominator)`` in lowest terms,
    or ``("unreadable",)`` for a number too large to read, which equals nothing.
    """

    key: tuple
    approximate: bool  # written with a decimal point or an exponent: matches to ROUND_PLACES places
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

    def variants(self) -> list[Number]:
        """The values this number may stand for: ``50%`` is 50 or 0.5 (as math-verify reads it)."""
        if not self.percent:
            return [self]
        bare = Number(self.key, self.approximate)
        return [bare, _scaled(bare, -2)]

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


def _scaled(number: Number, power: int) -> Number:
    """``number`` times ``10**power``."""
    if number.key[0] == "decimal":
        _, negative, digits, exponent = number.key
        return Number(("decimal", negative, digits, exponent + power if digits else 0), True)
    if number.key[0] == "fraction":
        value = number.value * Fraction(10) ** power
        return Number(("fraction", value.numerator, value.denominator), True)
    return number


def _decimal(text: str, negative: bool) -> Number | None:
    """Canonical form of an unsigned decimal such as ``1,234.50`` or ``1e3``; None if unreadable."""
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
    approximate = bool(fraction) or bool(exponent_text)
    if not digits:
        return Number(("decimal", False, "", 0), approximate)
    return Number(("decimal", negative, digits, exponent), approximate)


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
        denominator = _decimal(denominator_text, groups.get("den_sign") == "-")
        if denominator is None:
            return None
        top, bottom = number.value, denominator.value
        if top is None or bottom is None or bottom == 0:
            return None
        value = top / bottom
        approximate = number.approximate or denominator.approximate
        return Number(("fraction", value.numerator, value.denominator), approximate, percent)
    return Number(number.key, number.approximate, percent) if percent else number


def normalize_latex_number(text: str) -> str | None:
    """Strip the LaTeX a plain number may carry (``\\$5``, ``\\frac{3}{4}``, ``5\\%``, ``\\text{ cm}``).

    Returns None when other LaTeX remains, so the span goes to the symbolic tier.
    """
    text = text.strip()
    for start, end in _DELIMITERS:
        if len(text) > len(start) + len(end) and text.startswith(start) and text.endswith(end):
            text = text[len(start) : -len(end)].strip()
            break
    if "\\" not in text and "{" not in text and "^" not in text:
        return text
    text = text.replace("\\$", "$").replace("\\%", "%").replace("{,}", ",").replace("\\left", "").replace("\\right", "")
    text = _DEGREES.sub("°", text)
    text = _LATEX_SPACES.sub(" ", text)
    text = _LATEX_TEXT.sub(lambda m: " " + m.group(1), text)
    # Spaces keep a mixed number 2\frac{1}{3} from reading as 21/3: "2 1/3" is not a plain number.
    text = _LATEX_FRACTION.sub(_fraction_text, text)
    if "\\" in text or "{" in text or "}" in text or "^" in text:
        return None
    return text


def _fraction_text(match: re.Match) -> str:
    if match.group(1) is not None:
        return f" {match.group(1).replace(' ', '')}/{match.group(2).replace(' ', '')} "
    return f" {match.group(3)}/{match.group(4)} "


def parse_plain_number(text: str, units: bool = True) -> Number | None:
    """The number a whole answer span states, or None if the span is not a plain number.

    Reads integers, decimals, signs, ``3/4``, ``1,234``, ``$5``, ``50%``, ``1e3``, trailing
    periods and (with ``units``) trailing unit words such as ``12 apples.``.
    """
    text = text.strip()
    if text.isdigit() and text.isascii():  # the common case, without the regex
        return _decimal(text, False)
    text = normalize_latex_number(text.replace("\u2212", "-").replace("\u00a0", " ").replace("\u202f", " "))
    if text is None:
        return None
    text = text.strip().rstrip(".!;").strip()
    match = _PLAIN.fullmatch(text)
    if match is None:
        return None
    if match.group("unit") and not units:
        return None
    return _build(match.groupdict())


def parse_number_token(match: re.Match) -> Number | None:
    """The Number for a NUMBER_TOKEN match."""
    return _build(match.groupdict())


def same_number(gold: Number, prediction: Number) -> bool:
    """Whether two numbers are equal: exactly, or to ROUND_PLACES places when either is a decimal."""
    for g in gold.variants():
        for p in prediction.variants():
            if _equal(g, p):
                return True
    return False


def _equal(a: Number, b: Number) -> bool:
    if a.key[0] == "unreadable" or b.key[0] == "unreadable":
        return False
    if a.key == b.key:
        return True
    if a.key[0] == b.key[0] == "decimal" and not (a.approximate or b.approximate):
        return False  # canonical keys: different keys are different values
    x, y = a.value, b.value
    if x is None or y is None:
        return False
    if x == y:
        return True
    if a.approximate or b.approximate:
        return round(x, ROUND_PLACES) == round(y, ROUND_PLACES)
    return False
