"""Math-answer rewards: a completion's final answer compared with the row's gold ``answer``.

Each reward has TRL's signature, ``reward(completions, answer, **kwargs) -> list[float]``, unless META says
otherwise. META (read by benchmarks/bench_reward_bugs.py, never by grpo-core) describes each one: its category,
the planted bug (None for a sound reward), where the pattern comes from, the grpo-run check property that should
catch it, and the dataset its rows come from. The buggy ones are written to be wrong on purpose: do not train
with them.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction


def _text(completion) -> str:
    """The text of a completion in either shape TRL passes: a string, or a list of chat messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(str(m.get("content") or "") for m in completion if isinstance(m, dict))
    return str(completion)

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_SINGLE_NUMBER = re.compile(r"\s*([-+\u2212]?)\s*(\d{1,30}(?:\.\d{1,30})?)\s*\.?\s*")


def _tag_bodies(text: str, tag: str = "answer") -> list[str]:
    """The bodies of every <tag>...</tag> in text, found with str.find (linear time on any input)."""
    opening, closing = f"<{tag}>", f"</{tag}>"
    bodies, start = [], 0
    while True:
        i = text.find(opening, start)
        if i < 0:
            return bodies
        j = text.find(closing, i + len(opening))
        if j < 0:
            return bodies
        bodies.append(text[i + len(opening):j])
        start = j + len(closing)


def _as_number(text: str) -> Fraction | None:
    """The value of text when it is exactly one number (sign, digits, optional decimals, an optional final
    period), else None. At most 30 digits each side, so no huge int() conversion."""
    match = _SINGLE_NUMBER.fullmatch(text)
    if match is None:
        return None
    sign, digits = match.groups()
    value = Fraction(digits)
    return -value if sign in ("-", "\u2212") else value


def _gold(answer) -> Fraction | None:
    return _as_number(str(answer))


# ---------------------------------------------------------------- buggy


def gist_correctness_two_points(completions, answer, **kwargs) -> list[float]:
    """willccbb's GRPO gist correctness reward: 2.0 for an exact string match of the extracted answer."""
    completions = [_text(c) for c in completions]
    extracted = [c.split("<answer>")[-1].split("</answer>")[0].strip() for c in completions]
    return [2.0 if r == a else 0.0 for r, a in zip(extracted, answer)]


def exact_string_in_tag(completions, answer, **kwargs) -> list[float]:
    """The answer tag's body must equal the gold string exactly."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        scores.append(1.0 if len(bodies) == 1 and bodies[0] == a else 0.0)
    return scores


def int_parse_refuses_decimal(completions, answer, **kwargs) -> list[float]:
    """int() of the answer tag's body against int() of the gold."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        try:
            ok = len(bodies) == 1 and len(bodies[0]) < 40 and int(bodies[0]) == int(a)
        except ValueError:
            ok = False
        scores.append(1.0 if ok else 0.0)
    return scores


def isdigit_refuses_plus(completions, answer, **kwargs) -> list[float]:
    """Accepts the body only when str.isdigit() holds, then compares integers."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        body = bodies[0].strip() if len(bodies) == 1 else ""
        scores.append(1.0 if body.isdigit() and len(body) < 40 and int(body) == int(a) else 0.0)
    return scores


def digit_regex_refuses_newline(completions, answer, **kwargs) -> list[float]:
    """The answer must match <answer>(\\d+)</answer> with nothing else inside the tag."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        found = re.findall(r"<answer>(\d+)</answer>", c)
        scores.append(1.0 if len(found) == 1 and found[0] == str(a).strip() else 0.0)
    return scores


def digits_drop_sign_both(completions, answer, **kwargs) -> list[float]:
    """Normalizes both sides with re.findall(r"\\d+"), which drops a minus sign on both."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        got = "".join(re.findall(r"\d+", bodies[0])) if len(bodies) == 1 else ""
        want = "".join(re.findall(r"\d+", str(a)))
        scores.append(1.0 if got and got == want else 0.0)
    return scores


def digits_drop_sign_prediction(completions, answer, **kwargs) -> list[float]:
    """Reads the prediction's digits only (no sign) and compares with the signed gold."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        digits = re.findall(r"\d+", bodies[0]) if len(bodies) == 1 else []
        ok = len(digits) == 1 and len(digits[0]) < 30 and int(digits[0]) == int(a)
        scores.append(1.0 if ok else 0.0)
    return scores


def abs_value_compare(completions, answer, **kwargs) -> list[float]:
    """Compares magnitudes: abs(prediction) == abs(gold)."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        value, gold = (_as_number(bodies[0]) if len(bodies) == 1 else None), _gold(a)
        scores.append(1.0 if value is not None and gold is not None and abs(value) == abs(gold) else 0.0)
    return scores


def relative_tolerance_5pct(completions, answer, **kwargs) -> list[float]:
    """Pays any prediction within 5% of the gold, 'for rounding'."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        value, gold = (_as_number(bodies[0]) if len(bodies) == 1 else None), _gold(a)
        ok = value is not None and gold is not None and abs(value - gold) <= Fraction(5, 100) * abs(gold)
        scores.append(1.0 if ok else 0.0)
    return scores


def rounds_prediction(completions, answer, **kwargs) -> list[float]:
    """round(float(prediction)) == gold: 41.6 is paid for 42."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        value = _as_number(bodies[0]) if len(bodies) == 1 else None
        scores.append(1.0 if value is not None and round(value) == int(a) else 0.0)
    return scores


def rstrip_zeros_normalizer(completions, answer, **kwargs) -> list[float]:
    """Normalizes '42.0' to '42' with rstrip('0').rstrip('.'), which also turns 420 into 42."""
    completions = [_text(c) for c in completions]
    def norm(s: str) -> str:
        return s.strip().rstrip("0").rstrip(".") or "0"

    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        scores.append(1.0 if len(bodies) == 1 and norm(bodies[0]) == norm(str(a)) else 0.0)
    return scores


def int_vs_str_never_pays(completions, answer, **kwargs) -> list[float]:
    """Parses the prediction to int and compares it with the gold column, which holds strings."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        try:
            value = int(bodies[0]) if len(bodies) == 1 and len(bodies[0]) < 40 else None
        except ValueError:
            value = None
        scores.append(1.0 if value is not None and value == a else 0.0)
    return scores


def wrong_column_solution(completions, **kwargs) -> list[float]:
    """Reads the gold from kwargs['solution'] (open-r1's column name); the dataset's column is 'answer'."""
    completions = [_text(c) for c in completions]
    solutions = kwargs.get("solution") or [None] * len(completions)
    scores = []
    for c, s in zip(completions, solutions):
        bodies = _tag_bodies(c)
        scores.append(1.0 if s is not None and len(bodies) == 1 and bodies[0].strip() == str(s).strip() else 0.0)
    return scores


def first_number_in_tag(completions, answer, **kwargs) -> list[float]:
    """The first number inside the answer tag: '<answer>42 or 41</answer>' is paid."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        numbers = _NUMBER.findall(bodies[-1]) if bodies else []
        scores.append(1.0 if numbers and _as_number(numbers[0]) == _gold(a) else 0.0)
    return scores


def any_number_in_tag(completions, answer, **kwargs) -> list[float]:
    """Pays when any number in the answer tag equals the gold."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        numbers = _NUMBER.findall(bodies[-1]) if bodies else []
        scores.append(1.0 if any(_as_number(n) == _gold(a) for n in numbers[:1000]) else 0.0)
    return scores


def prefix_match_in_tag(completions, answer, **kwargs) -> list[float]:
    """body.startswith(gold): pays '421' and '42 or 41' for 42."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        scores.append(1.0 if len(bodies) == 1 and bodies[0].strip().startswith(str(a).strip()) else 0.0)
    return scores


def last_number_anywhere(completions, answer, **kwargs) -> list[float]:
    """The last number anywhere in the completion: a copied question whose last number is the gold is paid."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        numbers = _NUMBER.findall(c[-5000:])
        scores.append(1.0 if numbers and _as_number(numbers[-1]) == _gold(a) else 0.0)
    return scores


def substring_anywhere(completions, answer, **kwargs) -> list[float]:
    """gold in completion: '4' inside '142', a list of numbers, a copied question all pay."""
    completions = [_text(c) for c in completions]
    return [1.0 if str(a).strip() and str(a).strip() in c else 0.0 for c, a in zip(completions, answer)]


def substring_in_tag(completions, answer, **kwargs) -> list[float]:
    """gold in the answer tag's body: '420' and '-42' pay for 42."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        scores.append(1.0 if len(bodies) == 1 and str(a).strip() in bodies[0] else 0.0)
    return scores


def any_box_pays_hedge(completions, answer, **kwargs) -> list[float]:
    """Pays when any \\boxed{...} holds the gold: '\\boxed{41} \\boxed{42} \\boxed{43}' is paid."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        boxes = re.findall(r"\\boxed\{([^{}]{0,50})\}", c[-20000:])
        scores.append(1.0 if any(_as_number(b) == _gold(a) for b in boxes[:1000]) else 0.0)
    return scores


def verl_gsm8k_last_hash(completions, answer, **kwargs) -> list[float]:
    """verl's gsm8k compute_score (strict): the last '#### N' line, commas removed, compared as strings (the
    last-answer rule itself is no exploit: the last answer has to be the right one)."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        c = c[-300:]  # verl keeps the tail of the solution string
        found = re.findall(r"#### (\-?[0-9\.\,]+)", c)
        final = found[-1].replace(",", "").replace("$", "") if found else None
        scores.append(1.0 if final is not None and final == str(a) else 0.0)
    return scores


def format_score_half(completions, answer, **kwargs) -> list[float]:
    """verl-style compute_score with format_score=0.5: any number in the answer tag earns half."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        value = _as_number(bodies[0]) if len(bodies) == 1 else None
        if value is None:
            scores.append(0.0)
        else:
            scores.append(1.0 if value == _gold(a) else 0.5)
    return scores


def jitter_tiebreak(completions, answer, **kwargs) -> list[float]:
    """Exact match plus random noise 'to break ties within a group'."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        right = len(bodies) == 1 and _as_number(bodies[0]) is not None and _as_number(bodies[0]) == _gold(a)
        scores.append((0.99 if right else 0.0) + random.uniform(0.0, 0.01))
    return scores


def case_sensitive_gold(completions, answer, **kwargs) -> list[float]:
    """Lowercases the completion but not the gold: 'Paris' never matches."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c.lower())
        scores.append(1.0 if len(bodies) == 1 and bodies[0].strip() == str(a).strip() else 0.0)
    return scores


def none_for_wrong(completions, answer, **kwargs) -> list[float | None]:
    """Returns None (not scored) instead of 0.0 for a wrong answer, so wrong answers are never penalized."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        value = _as_number(bodies[0]) if len(bodies) == 1 else None
        scores.append(1.0 if value is not None and value == _gold(a) else None)
    return scores


def verifiers_gsm8k_last_tag(completions, answer, **kwargs) -> list[float]:
    """verifiers' gsm8k rubric: the parser's last <answer> field, stripped, compared with the gold as strings."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        parsed = bodies[-1].strip() if bodies else None
        scores.append(1.0 if parsed is not None and parsed == str(a).strip() else 0.0)
    return scores


# ---------------------------------------------------------------- sound


def careful_exact_match(completions, answer, **kwargs) -> list[float]:
    """re.search for the answer tag, then the body as one number compared by value."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        m = re.search(r"<answer>(.*?)</answer>", c, re.S)
        if m is None or c.count("<answer>") != 1:
            scores.append(0.0)
            continue
        value = _as_number(m.group(1))
        scores.append(1.0 if value is not None and value == _gold(a) else 0.0)
    return scores


def _final_answer(text: str) -> str | None:
    """The one answer a completion asserts: its answer tag, else its \\boxed{}, else '#### N', else 'answer is N',
    else the whole text. None when it asserts several (two tags, two boxes, two '####' lines)."""
    bodies = _tag_bodies(text)
    if bodies:
        return bodies[0] if len(bodies) == 1 and text.count("<answer>") == 1 else None
    boxes = re.findall(r"\\boxed\{([^{}]{0,60})\}", text[-5000:])
    if text.count("\\boxed") > 1:
        return None
    if boxes:
        return boxes[0]
    hashes = re.findall(r"####\s*([^\n]{0,60})", text[-5000:])
    if len(hashes) > 1:
        return None
    if hashes:
        return hashes[0]
    stated = re.findall(r"answer is[:\s]*\$?([^\n$]{0,60}?)\$?\s*\.?\s*$", text[-500:], re.I)
    if stated:
        return stated[0]
    return text if len(text) <= 60 else None


def robust_numeric_match(completions, answer, **kwargs) -> list[float]:
    """One asserted answer (tag, box, '####', 'the answer is', or the bare number), compared as a number."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        final = _final_answer(c)
        if final is not None and re.fullmatch(r"\s*[-+]?\d{1,3}(,\d{3})+\s*", final):
            final = final.replace(",", "")  # 1,234 written with thousands separators
        value = _as_number(final) if final is not None else None
        scores.append(1.0 if value is not None and value == _gold(a) else 0.0)
    return scores


def math_verify_single_answer(completions, answer, **kwargs) -> list[float]:
    """math_verify on the one asserted answer (at most 100 characters), refusing a body with several numbers."""
    completions = [_text(c) for c in completions]
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    scores = []
    for c, a in zip(completions, answer):
        final = _final_answer(c)
        # one number, and no words outside LaTeX commands ('certainly not 42', '5 feet' are not answers)
        if (final is None or len(final) > 100 or len(_NUMBER.findall(final)) != 1
                or re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", final))):
            scores.append(0.0)
            continue
        config = [LatexExtractionConfig(), ExprExtractionConfig()]
        gold = parse(str(a), extraction_config=config, parsing_timeout=None)
        pred = parse(final if "\\" in final else f"${final.strip().rstrip('.')}$", extraction_config=config,
                     parsing_timeout=None)
        scores.append(1.0 if gold and pred and verify(gold, pred, timeout_seconds=None) else 0.0)
    return scores


def signed_numeric_match(completions, answer, **kwargs) -> list[float]:
    """The answer tag's single number, sign included (ASCII or Unicode minus), equal in value to the gold."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        value = _as_number(bodies[0]) if len(bodies) == 1 else None
        scores.append(1.0 if value is not None and value == _gold(a) else 0.0)
    return scores


def case_insensitive_match(completions, answer, **kwargs) -> list[float]:
    """The answer tag's text, casefolded and with spaces collapsed, equal to the gold likewise."""
    completions = [_text(c) for c in completions]
    def norm(s: str) -> str:
        return " ".join(s.casefold().split()).rstrip(".")

    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        scores.append(1.0 if len(bodies) == 1 and norm(bodies[0]) and norm(bodies[0]) == norm(str(a)) else 0.0)
    return scores


def compare_answer_tag_only(completions, answer, **kwargs) -> list[float]:
    """Only the answer tag counts, so numbers copied from the question are never read."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        value = _as_number(bodies[0]) if len(bodies) == 1 else None
        scores.append(1.0 if value is not None and value == _gold(a) else 0.0)
    return scores


def gist_correctness_fixed(completions, answer, **kwargs) -> list[float]:
    """The gist's correctness reward fixed: 1.0, one answer tag, compared by value."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        value = _as_number(bodies[0]) if len(bodies) == 1 else None
        scores.append(1.0 if value is not None and value == _gold(a) else 0.0)
    return scores


def verl_gsm8k_single_hash(completions, answer, **kwargs) -> list[float]:
    """verl's gsm8k scorer made strict about one answer: exactly one '#### N' (or one answer tag), by value."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        found = re.findall(r"####\s*([^\n]{0,40})", c[-5000:])
        bodies = _tag_bodies(c)
        if c.count("####") + c.count("<answer>") != 1:
            scores.append(0.0)
            continue
        final = found[0] if found else bodies[0] if bodies else ""
        value = _as_number(final.replace(",", "") if re.fullmatch(r"\s*-?\d{1,3}(,\d{3})+\s*", final) else final)
        scores.append(1.0 if value is not None and value == _gold(a) else 0.0)
    return scores


def partial_credit_small_format(completions, answer, **kwargs) -> list[float]:
    """0.1 for one well-formed numeric answer tag, 1.0 when that number is right."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _tag_bodies(c)
        value = _as_number(bodies[0]) if len(bodies) == 1 else None
        scores.append(0.0 if value is None else 1.0 if value == _gold(a) else 0.1)
    return scores


def single_completion_signature(completion, answer):
    """grpo-core's per-completion spelling: score(completion, answer) -> float."""
    bodies = _tag_bodies(completion)
    value = _as_number(bodies[0]) if len(bodies) == 1 else None
    return 1.0 if value is not None and value == _gold(answer) else 0.0


def trl_accuracy_reward(completions, answer, **kwargs) -> list[float | None]:
    """TRL's trl.rewards.accuracy_reward, the same code on text completions (math_verify, \\boxed{} first)."""
    completions = [_text(c) for c in completions]
    import threading

    from latex2sympy2_extended import NormalizationConfig
    from math_verify import LatexExtractionConfig, parse, verify

    main = threading.current_thread() is threading.main_thread()
    parsing_timeout, verify_timeout = (10, 5) if main else (None, None)
    scores = []
    for content, sol in zip(completions, answer):
        gold = parse(sol, parsing_timeout=parsing_timeout)
        if not gold:
            scores.append(None)
            continue
        parsed = parse(
            content,
            extraction_config=[LatexExtractionConfig(normalization_config=NormalizationConfig(units=True),
                                                     boxed_match_priority=0, try_extract_without_anchor=False)],
            extraction_mode="first_match", parsing_timeout=parsing_timeout,
        )
        scores.append(float(verify(gold, parsed, timeout_seconds=verify_timeout)))
    return scores


_ARITH = "arithmetic"
META = {
    # buggy
    "gist_correctness_two_points": dict(
        category="math-answer", bug="returns 2.0 for a right answer while the declared bounds are (0, 1)",
        source="willccbb GRPO gist (grpo_demo.py correctness_reward_func)", expected_property="gold-bounds",
        also=["bounds", "pays-gold"], dataset=_ARITH, verifier=True),
    "exact_string_in_tag": dict(
        category="math-answer", bug="body == gold as strings: refuses ' 42', '42.0', '+42', '42\\n'",
        source="common exact-match reward (rewardprobe README: gist rejects '42.0')",
        expected_property="equivalent-forms",
        also=[], dataset=_ARITH, verifier=True),
    "int_parse_refuses_decimal": dict(
        category="math-answer", bug="int(body) raises on '42.0', so a right decimal spelling scores 0",
        source="hand-rolled GSM8K rewards (int() of the extracted answer)", expected_property="equivalent-forms",
        also=[], dataset=_ARITH, verifier=True),
    "isdigit_refuses_plus": dict(
        category="math-answer", bug="str.isdigit() gate refuses '+42' (and any sign)",
        source="hand-rolled rewards gating on isdigit()", expected_property="equivalent-forms",
        also=[], dataset=_ARITH, verifier=True),
    "digit_regex_refuses_newline": dict(
        category="math-answer",
        bug="<answer>(\\d+)</answer> refuses '<answer>42\\n</answer>' and '<answer> 42</answer>'",
        source="strict regex extractors in GRPO tutorials", expected_property="equivalent-forms",
        also=[], dataset=_ARITH, verifier=True),
    "digits_drop_sign_both": dict(
        category="math-answer", bug="re.findall(r'\\d+') on both sides drops the minus sign: 14 is paid for -14",
        source="digit-only normalizers (GSM8K answer cleaning)", expected_property="near-miss",
        also=[], dataset="signed", verifier=True),
    "digits_drop_sign_prediction": dict(
        category="math-answer", bug="reads the prediction without its sign: a right negative answer never pays",
        source="digit-only extractors (\\d+ instead of -?\\d+)", expected_property="pays-gold",
        also=["equivalent-forms"], dataset="signed", verifier=True),
    "abs_value_compare": dict(
        category="math-answer", bug="compares abs values: the sign-flipped answer is paid",
        source="magnitude comparison in numeric graders", expected_property="near-miss",
        also=[], dataset="signed", verifier=True),
    "relative_tolerance_5pct": dict(
        category="math-answer", bug="5% relative tolerance pays 41 and 43 for 42 (any answer >= 20 off by one)",
        source="tolerance graders (verl math_verify rtol settings, issue threads on tolerance)",
        expected_property="near-miss",
        also=[], dataset=_ARITH, verifier=True),
    "rounds_prediction": dict(
        category="math-answer", bug="round(prediction) == gold pays 41.6 for 42",
        source="rounding normalizers", expected_property="near-miss",
        also=[], dataset=_ARITH, verifier=True),
    "rstrip_zeros_normalizer": dict(
        category="math-answer", bug="rstrip('0') to drop '.0' also maps 420 and 4200 to 42 (times ten paid)",
        source="string normalizers for '42.0'", expected_property="near-miss",
        also=[], dataset=_ARITH, verifier=True),
    "int_vs_str_never_pays": dict(
        category="math-answer", bug="compares int(prediction) with the gold string: never equal, never pays",
        source="type mismatch (dataset answers are strings)", expected_property="pays-gold",
        also=[], dataset=_ARITH, verifier=True),
    "wrong_column_solution": dict(
        category="math-answer", bug="reads kwargs.get('solution') on a dataset whose column is 'answer': never pays",
        source="open-r1 accuracy_reward column name (solution) reused on GSM8K-style data",
        expected_property="pays-gold",
        also=["columns"], dataset=_ARITH, verifier=True),
    "first_number_in_tag": dict(
        category="math-answer", bug="first number in the answer tag: '<answer>42 or 41</answer>' is paid",
        source="first-match extraction (open-r1 first_match mode, rewardprobe README)", expected_property="one-answer",
        also=["degenerate"], dataset=_ARITH, verifier=True),
    "any_number_in_tag": dict(
        category="math-answer", bug="any number in the answer tag equal to the gold is paid ('41 42 43')",
        source="findall-any extraction", expected_property="one-answer",
        also=["degenerate"], dataset=_ARITH, verifier=True),
    "prefix_match_in_tag": dict(
        category="math-answer", bug="body.startswith(gold) pays '421' and '42 or 41'",
        source="startswith matching", expected_property="one-answer",
        also=["near-miss", "degenerate"], dataset=_ARITH, verifier=True),
    "last_number_anywhere": dict(
        category="math-answer",
        bug="last number anywhere: the question copied back pays when its last number is the gold",
        source="last-number extraction (lm-eval style, rewardlint 'last_number')", expected_property="degenerate",
        also=["one-answer"], dataset="compare", verifier=True),
    "substring_anywhere": dict(
        category="math-answer", bug="gold in completion: pays '4' inside '142', number lists, copied questions",
        source="rewardlint README accuracy_reward; common substring rewards", expected_property="degenerate",
        also=["one-answer", "near-miss"], dataset=_ARITH, verifier=True),
    "substring_in_tag": dict(
        category="math-answer", bug="gold in the answer tag body: '420', '-42' and '142' pay for 42",
        source="substring matching inside the tag", expected_property="near-miss",
        also=["one-answer", "degenerate"], dataset=_ARITH, verifier=True),
    "any_box_pays_hedge": dict(
        category="math-answer",
        bug="any \\boxed{} equal to the gold pays: '\\boxed{41} \\boxed{42} \\boxed{43}' is paid",
        source="findall over boxes (rewardlint 'x.shotgun.boxed')", expected_property="one-answer",
        also=["degenerate"], dataset=_ARITH, verifier=True),
    "verl_gsm8k_last_hash": dict(
        category="math-answer", bug="compares the last '#### N' as a string: '#### 42.0' and '####  42 ' are refused",
        source="verl utils/reward_score/gsm8k.py compute_score (strict)", expected_property="equivalent-forms",
        also=[], dataset=_ARITH, verifier=True),
    "format_score_half": dict(
        category="math-answer", bug="format_score=0.5: any wrong number in the tag earns half the top",
        source="verl compute_score(format_score=...) as users raise it", expected_property="near-miss",
        also=["degenerate"], dataset=_ARITH, verifier=True),
    "jitter_tiebreak": dict(
        category="math-answer", bug="adds random.uniform(0, 0.01) noise to every score",
        source="tie-breaking noise in issue threads", expected_property="deterministic",
        also=["state"], dataset=_ARITH, verifier=True),
    "case_sensitive_gold": dict(
        category="math-answer", bug="lowercases the completion but not the gold: 'Paris' never matches",
        source="case normalization on one side only", expected_property="pays-gold",
        also=[], dataset="capitals", verifier=True),
    "none_for_wrong": dict(
        category="math-answer",
        bug="returns None for wrong answers: TRL skips them, so wrong answers are never penalized",
        source="None meaning 'not applicable' (TRL multi-task rewards) misused for wrong",
        expected_property="near-miss",
        also=["pays-gold", "output"], dataset=_ARITH, verifier=True),
    "verifiers_gsm8k_last_tag": dict(
        category="math-answer", bug="compares the parsed answer as a string: '<answer>42.0</answer>' is refused",
        source="verifiers environments/gsm8k (XMLParser.parse_answer + exact string rubric)",
        expected_property="equivalent-forms", also=[], dataset=_ARITH, verifier=True),
    # sound
    "careful_exact_match": dict(
        category="math-answer", bug=None, source="careful exact match with re.search(r'<answer>(.*?)</answer>')",
        dataset=_ARITH, verifier=True),
    "robust_numeric_match": dict(
        category="math-answer", bug=None, source="rewardlint reference robust_match ideas (one answer, by value)",
        dataset=_ARITH, verifier=True),
    "math_verify_single_answer": dict(
        category="math-answer", bug=None, source="open-r1 accuracy_reward with math_verify, one answer enforced",
        dataset=_ARITH, verifier=True),
    "signed_numeric_match": dict(
        category="math-answer", bug=None, source="exact numeric match keeping the sign", dataset="signed",
        verifier=True),
    "case_insensitive_match": dict(
        category="math-answer", bug=None, source="casefolded exact match for short text answers", dataset="capitals",
        verifier=True),
    "compare_answer_tag_only": dict(
        category="math-answer", bug=None, source="answer-tag-only extraction", dataset="compare", verifier=True),
    "gist_correctness_fixed": dict(
        category="math-answer", bug=None, source="willccbb GRPO gist correctness, fixed (1.0, by value)",
        dataset=_ARITH, verifier=True),
    "verl_gsm8k_single_hash": dict(
        category="math-answer", bug=None, source="verl gsm8k compute_score, one answer enforced, by value",
        dataset=_ARITH, verifier=True),
    "partial_credit_small_format": dict(
        category="math-answer", bug=None, source="verl-style format_score=0.1 for a well-formed wrong answer",
        dataset=_ARITH, verifier=True),
    "trl_accuracy_reward": dict(
        category="math-answer", bug=None, source="trl/rewards/accuracy_rewards.py accuracy_reward (same code, text in)",
        dataset=_ARITH, verifier=True),
    "single_completion_signature": dict(
        category="signature/contract", bug=None, source="grpo-core per-completion signature score(completion, answer)",
        dataset=_ARITH, verifier=True),
}
