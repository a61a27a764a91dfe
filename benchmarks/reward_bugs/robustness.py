"""Robustness and time: rewards that crash or hang on text a policy can produce. TRL's signature.

See math_answer.py for what META holds. The buggy ones are wrong on purpose (one of them sleeps, one evaluates
the completion with eval(), one with sympy.sympify(), which also evaluates it): run them only here.
"""

from __future__ import annotations

import re
import time


def _text(completion) -> str:
    """The text of a completion in either shape TRL passes: a string, or a list of chat messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(str(m.get("content") or "") for m in completion if isinstance(m, dict))
    return str(completion)


def _answer(text: str) -> str | None:
    i = text.find("<answer>")
    j = text.find("</answer>", i + 8) if i >= 0 else -1
    if i < 0 or j < 0 or text.count("<answer>") != 1:
        return None
    return text[i + 8:j]


# ---------------------------------------------------------------- buggy


def eval_expression(completions, answer, **kwargs) -> list[float]:
    """eval() of the answer tag's body 'so that 6*7 counts as 42': NameError on words, hangs on 9**9**9**9."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        body = _answer(c)
        if body is None:
            scores.append(0.0)
            continue
        try:
            value = eval(body, {"__builtins__": {}})  # noqa: S307 (the bug)
        except SyntaxError:
            scores.append(0.0)
            continue
        scores.append(1.0 if value == int(a) else 0.0)
    return scores


def float_parse_no_guard(completions, answer, **kwargs) -> list[float]:
    """float(re.search(...).group(1)): AttributeError without a tag, ValueError on words in the tag."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        value = float(re.search(r"<answer>(.{0,50}?)</answer>", c[:20000], re.S).group(1))
        scores.append(1.0 if value == float(a) else 0.0)
    return scores


def last_number_index_error(completions, answer, **kwargs) -> list[float]:
    """re.findall(...)[-1] with no number in the completion raises IndexError."""
    completions = [_text(c) for c in completions]
    return [1.0 if re.findall(r"-?\d+", c)[-1] == str(a) else 0.0 for c, a in zip(completions, answer)]


def int_of_decimal_crash(completions, answer, **kwargs) -> list[float]:
    """int() of the answer tag's last [\\d.]+ run, guarded for a missing tag or number only: '42.' and '42.0'
    raise ValueError, so a right answer written with a period crashes the batch."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        body = _answer(c)
        runs = re.findall(r"[\d.]+", body) if body is not None else []
        if not runs:
            scores.append(0.0)
            continue
        scores.append(1.0 if int(runs[-1]) == int(a) else 0.0)
    return scores


def catastrophic_regex_gate(completions, answer, **kwargs) -> list[float]:
    """Gates on 'plain words only' with ^(\\w+\\s?)*$, which backtracks exponentially on a long run of words that
    ends in a symbol."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        prose = c.split("<answer>")[0]
        if prose.strip() and not re.match(r"^(\w+\s?)*$", prose):
            scores.append(0.0)
            continue
        body = _answer(c)
        scores.append(1.0 if body is not None and body.strip() == str(a) else 0.0)
    return scores


def sympify_answer(completions, answer, **kwargs) -> list[float]:
    """sympy.sympify() of the text after 'answer is' (or of the tag): evaluates power towers and factorials."""
    completions = [_text(c) for c in completions]
    import sympy

    scores = []
    for c, a in zip(completions, answer):
        stated = re.findall(r"answer is\s*(.{1,200})", c[-2000:])
        body = _answer(c)
        text = body if body is not None else stated[-1] if stated else None
        if text is None:
            scores.append(0.0)
            continue
        try:
            value = sympy.sympify(text.strip().rstrip("."))
            scores.append(1.0 if sympy.simplify(value - int(a)) == 0 else 0.0)
        except (sympy.SympifyError, TypeError, SyntaxError):
            scores.append(0.0)
    return scores


def quadratic_longest_number(completions, answer, **kwargs) -> list[float]:
    """Finds the longest run of digits by trying every start and end (quadratic in the length)."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        best = ""
        for i in range(len(c)):
            for j in range(i + 1, len(c) + 1):
                if not c[i:j].isdigit():
                    break
                if j - i > len(best):
                    best = c[i:j]
        scores.append(1.0 if best == str(a) else 0.0)
    return scores


def utf8_byte_length_penalty(completions, **kwargs) -> list[float]:
    """Length penalty in UTF-8 bytes: c.encode('utf-8') raises on a lone surrogate."""
    completions = [_text(c) for c in completions]
    return [max(0.0, 1.0 - len(c.encode("utf-8")) / 4000) for c in completions]


def slow_remote_check(completions, answer, **kwargs) -> list[float]:
    """Waits 3 s per completion, as a reward behind a rate-limited verification service does."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        time.sleep(3)
        body = _answer(c)
        scores.append(1.0 if body is not None and body.strip() == str(a) else 0.0)
    return scores


META = {
    "eval_expression": dict(
        category="robustness/time",
        bug="eval() of the answer: raises NameError/TypeError on words, hangs on 9**9**9**9",
        source="eval-based arithmetic graders", expected_property="hostile", also=["output", "time"],
        dataset="arithmetic", verifier=True),
    "float_parse_no_guard": dict(
        category="robustness/time", bug="AttributeError when there is no answer tag, ValueError on words in it",
        source="unguarded re.search(...).group(1)", expected_property="output", also=["hostile"],
        dataset="arithmetic", verifier=True),
    "last_number_index_error": dict(
        category="robustness/time", bug="IndexError when the completion has no number",
        source="re.findall(...)[-1] extraction", expected_property="output", also=["hostile"],
        dataset="arithmetic", verifier=True),
    "int_of_decimal_crash": dict(
        category="robustness/time",
        bug="int() of '42.' or '42.0' raises ValueError: a right answer with a period crashes",
        source="regex allowing decimals ([\\d.]+) followed by int()", expected_property="output",
        also=["hostile", "equivalent-forms"], dataset="arithmetic", verifier=True),
    "catastrophic_regex_gate": dict(
        category="robustness/time", bug="^(\\w+\\s?)*$ backtracks exponentially: a run of words ending in '!' hangs",
        source="ReDoS in input filters", expected_property="time", also=["hostile"], dataset="arithmetic",
        verifier=True),
    "sympify_answer": dict(
        category="robustness/time", bug="sympify evaluates 9**9**9**9 and (10^100)!: hangs or blows memory",
        source="sympy-based equivalence rewards", expected_property="time", also=["hostile"], dataset="arithmetic",
        verifier=True),
    "quadratic_longest_number": dict(
        category="robustness/time", bug="quadratic scan: 1 MB of digits takes hours", source="naive substring scans",
        expected_property="time", also=["hostile"], dataset="arithmetic", verifier=True),
    "utf8_byte_length_penalty": dict(
        category="robustness/time", bug="c.encode('utf-8') raises UnicodeEncodeError on a lone surrogate",
        source="byte-length penalties", expected_property="hostile", also=["output"], dataset="arithmetic"),
    "slow_remote_check": dict(
        category="robustness/time", bug="3 s per completion with no timeout declared",
        source="rate-limited verifier calls",
        expected_property="time", also=[], dataset="arithmetic", verifier=True),
}
