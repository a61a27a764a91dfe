"""Forms of an answer beyond one plain number: exact fractions, mixed numbers, units, and copies of the prompt.

An equivalent form is an answer (``\\frac{2}{4}`` for ``\\frac12``, ``1 1/2`` for ``3/2``,
``500 cm`` for ``5 m``); an answer that restates the prompt's own expression is not
(``4 + 18`` for ``What is 4 + 18?``). Units are compared by pint, imported only when two
answers carry different unit words.
"""

from __future__ import annotations

import re
from fractions import Fraction

from grpo_core import Number, find_numbers, parse_number

from grpo_reward_math.final import mixed_parts

_DELIMITED = re.compile(r"^\s*(\$\$|\$|\\\(|\\\[)(.*?)(\$\$|\$|\\\)|\\\])\s*$", re.S)
_FRACTION = re.compile(
    r"\(?\s*(?P<s>[-−+]?)\s*(?P<n>\d+)\s*/\s*(?P<d>\d+)\s*\)?"
    r"|(?P<sl>[-−]?)\s*\\[dt]?frac\s*(?:\{\s*(?P<nl>\d+)\s*\}|(?P<nd>\d))\s*(?:\{\s*(?P<dl>\d+)\s*\}|(?P<dd>\d))"
)
_OPERATORS = (("\\times", "*"), ("\\cdot", "*"), ("×", "*"), ("·", "*"), ("\\div", "/"), ("÷", "/"), ("−", "-"))
_LATEX_NOISE = re.compile(r"\\left|\\right|\\[,;!: ]|\\displaystyle|\s+")
_SIMPLE_FRAC = re.compile(r"\\[dt]?frac\{([^{}]+)\}\{([^{}]+)\}")
_PROMPT_OPERATOR = re.compile(r"(?<=[\d)])[-+*/^](?=[\d(])")
_ARITHMETIC_ONLY = re.compile(r"[\d.()+\-*/^]+")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_TEXT_COMMAND = re.compile(r"\\(?:text\w*|mathrm|mbox|operatorname)\s*\{([^{}]*)\}")
_UNIT_STOPWORDS = {"in", "a", "at", "of", "per", "s", "on", "to", "is", "or", "and", "the", "an", "each", "total"}


def question_text(prompt) -> str:
    """The last user message of a prompt (a string, or chat messages with few-shot turns before it)."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, (list, tuple)):
        users = [m.get("content") or "" for m in prompt if isinstance(m, dict) and m.get("role", "user") == "user"]
        return str(users[-1]) if users else ""
    return "" if prompt is None else str(prompt)

def unwrap(span: str) -> str:
    """The answer without its math delimiters or ``\\boxed{}``."""
    span = span.strip()
    if span.startswith("\\boxed{") and span.endswith("}"):
        span = span[7:-1].strip()
    match = _DELIMITED.match(span)
    return match.group(2).strip() if match else span


def exact_value(span: str) -> Number | None:
    """A fraction of two integers in any terms (``2/4``, ``\\frac{6}{8}``) or a mixed number (``1 1/2``), exactly."""
    text = unwrap(span).rstrip(".").strip()
    mixed = mixed_parts(text)
    if mixed is not None:
        whole, top, bottom, negative = mixed
        value = Fraction(whole * bottom + top, bottom) * (-1 if negative else 1)
        return Number(("fraction", value.numerator, value.denominator))
    match = _FRACTION.fullmatch(text)
    if match is None:
        return None
    top = int(match.group("n") or match.group("nl") or match.group("nd"))
    bottom = int(match.group("d") or match.group("dl") or match.group("dd"))
    if bottom == 0:
        return None
    sign = (match.group("s") or "") + (match.group("sl") or "")
    value = Fraction(top, bottom) * (-1 if sign in ("-", "−") else 1)
    return Number(("fraction", value.numerator, value.denominator))


def canonical(text: str) -> str:
    """Text with spacing, delimiters and operator spellings made uniform (``\\frac{8}{4}`` and ``8 ÷ 4`` give ``8/4``)."""
    text = text.replace("$", "").replace("\\(", "").replace("\\)", "").replace("\\[", "").replace("\\]", "")
    text = _LATEX_NOISE.sub("", text).replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    for spelling, operator in _OPERATORS:
        text = text.replace(spelling, operator)
    text = _SIMPLE_FRAC.sub(lambda m: f"{_grouped(m.group(1))}/{_grouped(m.group(2))}", text)
    return re.sub(r"\{(\d+(?:\.\d+)?)\}", r"\1", text)  # 2^{3} is 2^3


def _grouped(part: str) -> str:
    return part if re.fullmatch(r"\d+(?:\.\d+)?", part) else f"({part})"


def _is_expression(text: str) -> bool:
    return bool(re.search(r"[-+*/^]|\\[A-Za-z]", text.lstrip("-+")))


def copies_prompt(span: str, question: str, gold_text: str = "") -> bool:
    """Whether the answer restates the prompt's expression: its text, or its numbers joined by its operators.

    A plain integer or decimal is never a copy (a gold answer may be one of the prompt's numbers),
    nor is an answer written exactly as the gold answer is.
    """
    if not question:
        return False
    answer = canonical(unwrap(span)).rstrip(".")
    while answer.startswith("(") and answer.endswith(")") and answer.count("(") == 1:
        answer = answer[1:-1]
    if not _is_expression(answer) or answer == canonical(unwrap(gold_text)):
        return False
    asked = canonical(question)
    if answer in asked:
        return True
    if not _ARITHMETIC_ONLY.fullmatch(answer):
        return False
    numbers = set(re.findall(r"\d+(?:\.\d+)?", answer))
    operators = set(_PROMPT_OPERATOR.findall(answer)) or set(re.findall(r"[-+*/^]", answer.lstrip("-")))
    return numbers <= set(re.findall(r"\d+(?:\.\d+)?", asked)) and operators <= set(_PROMPT_OPERATOR.findall(asked))


def math_only(span: str) -> bool:
    """Whether an answer is a formula, not prose or a list, so math-verify may judge it against a number."""
    text = unwrap(span)
    if not text or len(text) > 500 or re.search(r"[,;]|\\text|\\mbox|\\(?:begin|end)\b", text):
        return False
    powers = text.replace("**", "^")  # Python's power, as LaTeX writes it
    if re.search(r"\d\s+[-+]?\d|\^\s*\{[^{}]*[\^{]|\^\s*\(?\s*[-+]?\d[\d.]*\s*\)?\s*\^|\^\s*[{(]?\s*[-+]?\d{3}",
                 powers):
        return False  # numbers side by side are a spray, and a power tower is no way to write a number
    return not re.search(r"[A-Za-z]{2,}", _COMMAND.sub("", text))


def _quantity(text: str):
    """``(value, pint units)`` for an answer with a unit pint knows (``500 cm``, ``2.5 \\text{ km}``), else None."""
    text = _TEXT_COMMAND.sub(lambda m: " " + m.group(1), unwrap(text)).replace("^\\circ", "°").replace("^", "**")
    token = next(find_numbers(text), None)
    if token is None or text[: token.start].strip(" -+$") or token.number is None or token.number.value is None:
        return None
    unit = text[token.end :].strip(" .")
    number = parse_number(text[: token.end])
    if not re.search(r"[^\W\d_]", unit) or number is None or number.value is None:
        return None
    registry = _registry()
    for candidate in (unit, unit.split()[0]):
        if candidate.lower() in _UNIT_STOPWORDS:
            continue
        try:
            return number.value, registry.parse_units(candidate)
        except Exception:
            continue
    return None


def same_quantity(gold_text: str, span: str, rel_tol: float = 0.0) -> bool | None:
    """Whether two answers with units are the same quantity; None unless pint reads both units and they differ."""
    letters = re.compile(r"[^\W\d_]")
    if not (letters.search(unwrap(gold_text)) and letters.search(unwrap(span))):
        return None
    unit_text = [re.sub(r"[\d\s.,$\\{}]", "", unwrap(t)).lower() for t in (gold_text, span)]
    if unit_text[0] == unit_text[1]:
        return None
    gold, answer = _quantity(gold_text), _quantity(span)
    if gold is None or answer is None or gold[1] == answer[1]:
        return None
    registry = _registry()
    try:
        converted = registry.Quantity(answer[0], answer[1]).to(gold[1]).magnitude
    except Exception:  # another dimension: 5 kg is no length
        return False
    converted = Fraction(converted)
    return converted == gold[0] or bool(rel_tol) and abs(converted - gold[0]) <= Fraction(rel_tol) * abs(gold[0])


_UNITS = None


def _registry():
    global _UNITS
    if _UNITS is None:
        import pint

        _UNITS = pint.UnitRegistry(non_int_type=Fraction)  # exact conversion factors (1 inch = 127/50 cm)
    return _UNITS
