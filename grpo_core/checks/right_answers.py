"""Right answers built from the row: what a reward must pay, and what it must not pay beside them.

From a row's answer column the checks write the right answer in the forms models write it (bare, in the tags the
prompt asks for, ``\\boxed{}``, ``#### 42``, prose) and ask: does some form earn the top (``pays-gold``, and inside
the bounds); do forms that differ only in whitespace, a trailing ``.0`` or a ``+`` score the same
(``equivalent-forms``); does the answer off by one, times ten, with its sign flipped or a digit dropped, in the form
that was paid, score below it (``near-miss``); is a hedge (``42 or 41`` in one tag, an answer tag or box for each of
two answers, in either order) refused (``one-answer``). ``format_state`` builds on these rows. No list of known
rewards is consulted: each finding comes from the scores."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

from grpo_core.answers.numbers import parse_plain_number
from grpo_core.checks.display import clip_repr
from grpo_core.checks.inputs import columns_of
from grpo_core.checks.results import FAIL, PASS, SKIP, PropertyResult
from grpo_core.checks.subject import Item, RewardUnderTest
from grpo_core.rewards.reward import completion_text

GOLD_COLUMNS = ("answer", "solution", "ground_truth", "gold", "label", "labels", "target", "expected_answer",
                "final_answer", "reference")
ANSWER_TAGS = ("answer", "final", "final_answer", "result", "solution", "output")
REASONING = "Let me work it out step by step."
ROWS = 6  # rows the right answers are built from
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_TAG = re.compile(r"<([A-Za-z_][\w-]{0,30})>")


@dataclass
class Row:
    """One row's right answer and the forms tried, with their scores."""

    columns: dict
    prompt: str
    gold: str
    forms: list = field(default_factory=list)  # (label, text)
    scores: list = field(default_factory=list)

    def paid(self, top: float, tol: float) -> list[tuple[str, str, float]]:
        return [(label, text, s) for (label, text), s in zip(self.forms, self.scores)
                if s is not None and s >= top - tol]


def gold_source(subject: RewardUnderTest) -> str | None:
    """The dataset column holding the right answer among those the reward reads, or None."""
    columns = subject.reward.columns
    for name in GOLD_COLUMNS:
        if name in columns:
            return columns[name]
    return next((source for source in columns.values() if source in GOLD_COLUMNS), None)


def reads_gold(subject: RewardUnderTest) -> bool:
    """Whether the right-answer properties concern the reward: it reads an answer column and pays above 0."""
    return gold_source(subject) is not None and subject.hi > 0


def prompt_tags(prompt: str) -> list[str]:
    """The tags a prompt asks for, in order (``<think>``, ``<answer>``), without repeats."""
    return list(dict.fromkeys(name for name in _TAG.findall(prompt or "") if not name.startswith("/")))


def tagged(tags: list[str], answer: str, body: str = REASONING, blank: str | None = None, compact: bool = False) -> str:
    """A completion filling each tag, each on its own lines: the answer in an answer-like tag, reasoning in the
    others (``blank``: every body that text instead; ``compact``: no line breaks around the bodies)."""
    if not any(t.lower() in ANSWER_TAGS for t in tags):
        tags = [*tags, "answer"]
    parts = []
    for tag in tags:
        inside = blank if blank is not None else answer if tag.lower() in ANSWER_TAGS else body
        parts.append(f"<{tag}>{inside}</{tag}>" if compact else f"<{tag}>\n{inside}\n</{tag}>")
    return ("" if compact else "\n").join(parts)


def forms_of(gold: str, prompt: str) -> list[tuple[str, str]]:
    """The right answer as models write it; the prompt's own format first."""
    tags = [t for t in prompt_tags(prompt) if t.lower() not in ("br", "p", "b", "i")]
    forms = []
    if tags:
        forms.append(("in the prompt's tags", tagged(tags, gold)))
    forms += [
        ("bare", gold),
        ("in <answer> tags", f"<answer>{gold}</answer>"),
        ("after <think>, in <answer> tags", tagged(["think", "answer"], gold)),
        ("after <reasoning>, in <answer> tags", tagged(["reasoning", "answer"], gold)),
        ("boxed", f"{REASONING} The answer is \\boxed{{{gold}}}."),
        ("boxed after <think>", f"<think>\n{REASONING}\n</think>\nThe answer is \\boxed{{{gold}}}."),
        ("after ####", f"{REASONING}\n#### {gold}"),
        ("a sentence", f"The answer is {gold}."),
        ("in prose", f"{REASONING} The answer is {gold}."),
        ("at the end of prose", f"{REASONING} Adding it all up, I get {gold}."),
    ]
    number = as_number(gold)
    if number is not None and abs(number) >= 1000 and number.denominator == 1:
        forms.append(("with a thousands separator", f"The answer is {int(number):,}."))
    return list(dict((text, (label, text)) for label, text in forms).values())


def as_number(text: str) -> Fraction | None:
    text = str(text).strip()
    return Fraction(text) if re.fullmatch(r"[-+]?\d+(?:\.\d+)?", text) else None


def replaced(form: str, gold: str, other: str) -> str:
    """``form`` with its one right answer replaced by ``other`` (the last occurrence: the answer comes last)."""
    head, found, tail = form.rpartition(gold)
    return f"{head}{other}{tail}" if found else form


def near_misses(gold: str) -> list[tuple[str, str]]:
    """Wrong answers a tolerance or sign bug pays: off by one, times ten, the sign flipped, a digit dropped. Each is
    written exactly (no float rounding: ``-1e+11`` is not a miss of ``-100000000000.0``), and one whose value equals
    the gold, in any notation the answer reader takes, is left out."""
    number = as_number(gold)
    if number is None:
        return []
    decimals = len(gold.strip().partition(".")[2])
    misses = [("off by one", _exact(number + 1, decimals)), ("off by minus one", _exact(number - 1, decimals)),
              ("times ten", _exact(number * 10, decimals)),
              ("off by a fraction", _exact(number - Fraction(2, 5), max(decimals, 1)))]
    if number != 0:
        misses.append(("with its sign flipped", _exact(-number, decimals)))
    digits = gold.strip().lstrip("+-")
    if len(digits.replace(".", "")) >= 2 and digits[:-1].rstrip(".") not in ("", "-"):
        misses.append(("with a digit dropped", gold.strip()[:-1].rstrip(".")))
    return [(label, text) for label, text in dict.fromkeys(misses) if _value(text) != number]


def _exact(value: Fraction, places: int) -> str:
    """``value`` (a decimal with at most ``places`` places) written with exactly ``places`` places."""
    scaled = value * 10**places
    assert scaled.denominator == 1, (value, places)
    digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
    body = f"{digits[:-places]}.{digits[-places:]}" if places else digits
    return f"-{body}" if scaled < 0 else body


def _value(text: str) -> Fraction | None:
    number = parse_plain_number(text)
    return None if number is None else number.value


def equivalents(form: str, gold: str) -> list[tuple[str, str]]:
    """The same answer written differently: surrounding whitespace, a trailing ``.0``, a ``+`` sign."""
    out = [("with a leading space", " " + form), ("with a trailing newline", form + "\n")]
    inside = replaced(form, gold, f" {gold} ")
    if inside != form and form != gold:
        out.append(("with spaces around the answer", inside))
    number = as_number(gold)
    if number is not None and number.denominator == 1 and "." not in gold:
        out.append(("with a trailing .0", replaced(form, gold, f"{gold.strip()}.0")))
        if number > 0 and not gold.strip().startswith("+"):
            out.append(("with a + sign", replaced(form, gold, f"+{gold.strip()}")))
    return out


def rows_for(subject: RewardUnderTest, inputs, source: str) -> list[Row]:
    """Up to ``ROWS`` rows with a right answer: the real rows (their whole prompt, system message included), else
    rows the reward's column strategy draws."""
    found = []
    if inputs.rows:
        for row in inputs.rows[:ROWS * 3]:
            columns = columns_of(subject.reward, row)
            prompt = row.get("prompt")
            text = "\n".join(completion_text(m) for m in prompt) if isinstance(prompt, list) else completion_text(prompt)
            found.append((columns, text))
    else:
        try:  # the bound reward's own rows (variant 0), from its column strategy
            strategy = inputs.per_variant("right answers", lambda vi: (inputs.prompted_rows(vi),))
            found = [drawn for vi, drawn in inputs.drawn(strategy, ROWS * 2) if vi == 0]
        except Exception:
            return []
    rows = []
    for columns, prompt in found:
        gold = columns.get(source)
        if isinstance(gold, (int, float)) and not isinstance(gold, bool) and math.isfinite(gold):
            gold = str(gold)
        if isinstance(gold, str) and gold.strip() and len(gold) <= 200:
            rows.append(Row(columns, prompt, gold.strip()))
        if len(rows) == ROWS:
            break
    return rows


def score(subject: RewardUnderTest, row: Row, texts: list[str]) -> list | None:
    outcome = subject.call(0, [Item(text, row.columns, row.prompt) for text in texts])
    return None if outcome.raised is not None or not outcome.scores else list(outcome.scores)


def alone(subject: RewardUnderTest, row: Row, text: str) -> float | None:
    """The score of one completion scored by itself (None when it has none)."""
    got = score(subject, row, [text])
    return got[0] if got else None


def margin(subject: RewardUnderTest) -> float:
    """How close to a score counts as paying it: 2% of the bounds' range (a reward that scales by length pays a
    longer right answer a little less), at least the tolerance."""
    span = subject.hi - subject.lo if math.isfinite(subject.hi - subject.lo) else 1.0
    return max(tolerance(subject), 0.02 * span)


def tolerance(subject: RewardUnderTest) -> float:
    span = subject.hi - subject.lo if math.isfinite(subject.hi - subject.lo) else 1.0
    return max(1e-9, float(subject.spec.checks.tolerance or 0.0), 1e-9 * span)


class Scored:
    """The rows' forms scored once per reward under test, for every right-answer property. ``ignored`` says why
    they do not apply to a reward that reads every column through ``**kwargs`` but not the answer: it pays its best
    form something, and the near misses in it just as much. One that pays nothing at all is judged (a column read
    under the wrong name never pays)."""

    def __init__(self, subject: RewardUnderTest, inputs) -> None:
        self.rows: list[Row] = []
        self.ignored = ""
        source = gold_source(subject)
        for row in rows_for(subject, inputs, source) if source else []:
            row.forms = forms_of(row.gold, row.prompt)
            row.scores = score(subject, row, [text for _, text in row.forms]) or []
            if row.scores and any(s is not None for s in row.scores):
                self.rows.append(row)
        optional = source is not None and all(subject.reward.columns.get(n) != source or n in subject.reward.optional
                                              for n in subject.reward.columns)
        if optional and self.rows:
            row = self.rows[0]
            best, text = max((s, t) for (_, t), s in zip(row.forms, row.scores) if s is not None)
            misses = near_misses(row.gold) or [("another answer", "zzz")]
            wrong = score(subject, row, [replaced(text, row.gold, w) for _, w in misses]) or []
            if best > subject.lo + tolerance(subject) and all(s is not None and abs(s - best) <= tolerance(subject)
                                                               for s in wrong):
                self.ignored = (f"it reads the column '{source}' only through **kwargs, and a wrong answer scores as "
                                "the right one: it judges no answer")


def scored_rows(subject: RewardUnderTest, inputs) -> Scored:
    if getattr(subject, "_right_answers", None) is None:
        subject._right_answers = Scored(subject, inputs)
    return subject._right_answers


def example_of(subject: RewardUnderTest, row: Row, texts: list[str], scores: list, **extra) -> dict:
    return subject.example(0, [Item(t, row.columns, row.prompt) for t in texts], scores=scores, **extra)


def pays_gold(prop, subject: RewardUnderTest, inputs, deadline: float) -> PropertyResult:
    scored, tol = scored_rows(subject, inputs), tolerance(subject)
    if scored.ignored:
        return subject.result("pays-gold", SKIP, scored.ignored)
    if not scored.rows:
        return subject.result("pays-gold", SKIP, "no row's right answer could be scored (every score None)")
    for row in scored.rows:
        for (label, text), s in zip(row.forms, row.scores):
            if s is not None and not (subject.lo - tol <= s <= subject.hi + tol):
                return subject.result(
                    "pays-gold", FAIL, f"pays-gold violated: a right answer ({label}, {clip_repr(text)}, for the "
                    f"answer {row.gold!r}) scored {s!r}, outside the declared bounds ({subject.lo:g}, {subject.hi:g})",
                    example_of(subject, row, [text], [s]), len(scored.rows))
    unpaid = [row for row in scored.rows if not row.paid(subject.hi, margin(subject))]
    if len(unpaid) * 2 > len(scored.rows):
        row = unpaid[0]
        best = max((s, label, text) for (label, text), s in zip(row.forms, row.scores) if s is not None)
        never = "never pays a right answer" if len(unpaid) == len(scored.rows) else (
            f"pays a right answer on only {len(scored.rows) - len(unpaid)} of {len(scored.rows)} rows")
        return subject.result(
            "pays-gold", FAIL, f"pays-gold violated: some form of the right answer earns the top {subject.hi:g} on "
            f"most rows; it {never}: on the row whose answer is {row.gold!r}, the best of {len(row.forms)} forms "
            f"({best[1]}, {clip_repr(best[2])}) scored {best[0]!r}. Look for a column read under the wrong name, a "
            "number compared with text, or a parser that never matches",
            example_of(subject, row, [text for _, text in row.forms], row.scores), len(scored.rows))
    return subject.result("pays-gold", PASS, f"a right answer earned the top on {len(scored.rows) - len(unpaid)} of "
                          f"{len(scored.rows)} rows", examples=len(scored.rows))


def paid_rows(subject: RewardUnderTest, inputs, name: str):
    scored, tol = scored_rows(subject, inputs), margin(subject)
    if scored.ignored:
        return None, subject.result(name, SKIP, scored.ignored)
    rows = [(row, row.paid(subject.hi, tol)) for row in scored.rows]
    rows = [(row, paid) for row, paid in rows if paid]
    if not rows:
        return None, subject.result(name, SKIP, "no right answer earned the top (see pays-gold)")
    return rows, None


def equivalent_forms(prop, subject: RewardUnderTest, inputs, deadline: float) -> PropertyResult:
    rows, skipped = paid_rows(subject, inputs, "equivalent-forms")
    if skipped:
        return skipped
    tol, tried = margin(subject), 0
    for row, paid in rows:
        label, form, top = paid[0]
        variants = equivalents(form, row.gold)
        scores = score(subject, row, [text for _, text in variants])
        if scores is None:  # the batch raised: say which right answer made it
            for how, text in variants:
                outcome = subject.call(0, [Item(text, row.columns, row.prompt)])
                if outcome.raised is not None:
                    return subject.result(
                        "equivalent-forms", FAIL, f"equivalent-forms violated: the same right answer written "
                        f"differently scores the same; {clip_repr(text)} ({how}) made it raise {outcome.raised}",
                        example_of(subject, row, [text], [None]), tried + 1)
            scores = []
        tried += len(scores)
        for (how, text), s in zip(variants, scores):
            if s is None or s < top - tol:
                return subject.result(
                    "equivalent-forms", FAIL, f"equivalent-forms violated: the same right answer written differently "
                    f"scores the same; {clip_repr(text)} ({how}) scored {s!r} where {clip_repr(form)} ({label}) "
                    f"scored {top!r}: a right answer refused", example_of(subject, row, [form, text], [top, s]), tried)
    return subject.result("equivalent-forms", PASS, f"{tried} rewritten right answers scored as their originals",
                          examples=tried)


def near_miss(prop, subject: RewardUnderTest, inputs, deadline: float) -> PropertyResult:
    rows, skipped = paid_rows(subject, inputs, "near-miss")
    if skipped:
        return skipped
    tol, tried = margin(subject), 0
    for row, paid in rows:
        misses = near_misses(row.gold)
        for label, form, top in paid[:2]:
            texts = [replaced(form, row.gold, wrong) for _, wrong in misses]
            scores = score(subject, row, texts) or []
            tried += len(scores)
            # A flat amount for any wrong answer, half the right one's or more, pays the form (a format score);
            # a graded reward's partial credit varies with how close the answer is, and is its design
            half = subject.lo + (top - subject.lo) / 2
            flat = len(scores) > 1 and None not in scores and max(scores) - min(scores) <= tolerance(subject)
            for (how, wrong), text, s in zip(misses, texts, scores):
                if s is not None and (s >= top - tol or flat and s >= half - tolerance(subject)):
                    much = "as much as the right answer" if s >= top - tol else (
                        f"half or more of what the right answer scored ({top!r}): a wrong answer in the right form "
                        "is paid for the form")
                    return subject.result(
                        "near-miss", FAIL, f"near-miss violated: a wrong answer scores below the right one in the "
                        f"form that was paid; the answer {how} ({wrong!r} for {row.gold!r}), {clip_repr(text)}, "
                        f"scored {s!r}, {much}", example_of(subject, row, [form, text], [top, s]), tried)
    if not tried:
        return subject.result("near-miss", SKIP, "no right answer is a number to change")
    return subject.result("near-miss", PASS, f"{tried} near misses scored below the right answer", examples=tried)


def hedges(form: str, gold: str, wrong: str) -> list[tuple[str, list[str]]]:
    """Two answers in one completion, each as (what, texts): within one tag or box any text paid is a finding;
    one tag or box each, in both orders, is a finding only when both orders are paid (a last-answer rule is one)."""
    out = []
    if re.search(r"<(\w+)>\s*" + re.escape(gold) + r"\s*</\1>", form) or "\\boxed{" in form:
        out.append(("two answers in one tag or box", [replaced(form, gold, f"{gold} or {wrong}"),
                                                      replaced(form, gold, f"{wrong} or {gold}")]))
        wrong_form = replaced(form, gold, wrong)
        out.append(("an answer tag or box for each of two answers", [wrong_form + "\n" + form,
                                                                     form + "\n" + wrong_form]))
    return out


def one_answer(prop, subject: RewardUnderTest, inputs, deadline: float) -> PropertyResult:
    rows, skipped = paid_rows(subject, inputs, "one-answer")
    if skipped:
        return skipped
    tol, tried = margin(subject), 0
    for row, paid in rows:
        wrong = next((w for _, w in near_misses(row.gold)), "not " + row.gold)
        for label, form, top in paid[:3]:
            for what, texts in hedges(form, row.gold, wrong):
                scores = score(subject, row, texts) or []
                tried += len(scores)
                hits = [s is not None and s >= top - tol for s in scores]
                if (any(hits) if what.startswith("two answers in one") else len(hits) == 2 and all(hits)):
                    text, s = next((t, s) for t, s, hit in zip(texts, scores, hits) if hit)
                    return subject.result(
                        "one-answer", FAIL, f"one-answer violated: a completion with two different answers is not "
                        f"paid; {what}, {clip_repr(text)} (right {row.gold!r}, wrong {wrong!r}), scored {s!r}, as "
                        f"much as the right answer alone: a policy is paid to hedge",
                        example_of(subject, row, [form, *texts], [top, *scores]), tried)
    if not tried:
        return subject.result("one-answer", SKIP, "no right answer was paid in a tag or a box")
    return subject.result("one-answer", PASS, f"{tried} completions with two answers were not paid", examples=tried)

