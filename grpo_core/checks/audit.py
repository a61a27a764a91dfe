"""The exploit audit: completions that skip the task must not be paid, and dataset rows the reward cannot use
(a column it reads missing, a row its ``row_problems`` finds unfit).

Each property is a function ``(prop, subject, inputs, deadline) -> PropertyResult`` that ``catalogue`` registers;
the degenerate completions come from the kit in ``degenerate``."""

from __future__ import annotations

import math
import time

from grpo_core.checks.degenerate import ATTACK_PARTS, GENERIC_ATTACKS, attacks, generic_degenerate, padding_to
from grpo_core.checks.display import clip, clip_repr, first_line
from grpo_core.checks.inputs import Inputs, columns_of
from grpo_core.checks.registry import Property
from grpo_core.checks.results import FAIL, PASS, SKIP, WARN, PropertyResult, problem_line
from grpo_core.checks.search import describe
from grpo_core.checks.subject import Item, RewardUnderTest
from grpo_core.rewards.reward import completion_text


# Above the low bound by less than this share of the bounds' range, the reward pays "nothing": its declared
# upper bound says nothing about what it pays, so a degenerate completion is compared with real ones instead.
FAR_BELOW_SHARE = 0.01
ROW_SURVEY_SIZE = 50  # rows drawn from a reward's column_strategy to look for row problems
GENERIC_ONLY = "declares none of its own"  # what a passed degenerate result says when only the generic ones were tried
DECLARE_ROW_PROBLEMS = ('declare one like this: checks=RewardChecks(row_problems=lambda columns, params: '
                        '[("gold answer cannot be read", columns["answer"])] if ... else []), what makes one dataset '
                        'row unfit for the reward')


def degenerate_pairs(value) -> tuple[list, str]:
    """The (label, completion text) pairs a degenerate() callable returned, or why they are not that."""
    expected = "degenerate() must return a list of (label, completion) pairs"
    try:
        pairs = list(value or [])
    except TypeError:
        return [], f"{expected}, got {clip_repr(value)}"
    out = []
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            return [], f"{expected}, got the item {clip_repr(pair)}"
        out.append((str(pair[0]), completion_text(pair[1])))
    return out, ""


def degenerate(prop: Property, subject: RewardUnderTest, inputs: Inputs, deadline: float) -> PropertyResult:
    share = float(subject.spec.checks.degenerate_share)
    if subject.hi <= 0:
        return subject.result("degenerate", SKIP, f"a penalty-only reward (high bound {subject.hi:g}) leaves any "
                                                  "completion it does not penalise at its top: see penalty")
    if share >= 1.0:
        return subject.result("degenerate", SKIP, f"the reward sets degenerate_share={share:g}, so it may pay a "
                                                  "completion that skips the task up to its high bound")
    from hypothesis import strategies as st

    try:
        strategy = inputs.per_variant("degenerate", lambda vi: (
            inputs.prompted_rows(vi), st.lists(inputs.choices(vi), min_size=1, max_size=3)))
        examples = inputs.drawn(strategy, inputs.max_examples, deadline)
    except Exception as error:
        return subject.result("degenerate", FAIL, f"the check could not run: drawing rows raised "
                                                  f"{type(error).__name__}: {first_line(error)}")
    rows = tried = 0
    stopped = False
    for vi, (columns, prompt), choices in examples:
        if rows and time.monotonic() > deadline:
            stopped = True
            break
        subject.progress.example(rows)
        found = _audit_row(prop, subject, inputs, vi, columns, prompt, choices, share, rows)
        if isinstance(found, PropertyResult):
            found.examples = rows + 1
            return found
        rows += 1
        tried += found
    how = (f"{tried} degenerate completions scored on {rows} row{'s' * (rows != 1)}"
           + (", then the time budget was spent" if stopped else ""))
    if subject.spec.checks.degenerate is not None:
        return subject.result("degenerate", PASS, how, examples=rows)
    how += f"; only the generic ones, as the reward {GENERIC_ONLY}"
    note = f"checked only with the generic completions ({GENERIC_ATTACKS}): the reward {GENERIC_ONLY}; {prop.declare}"
    return subject.result("degenerate", PASS, how, examples=rows, note=note)


def _audit_row(prop: Property, subject: RewardUnderTest, inputs: Inputs, vi: int, columns: dict, prompt: str,
               choices: list, share: float, index: int = 0):
    """Score the degenerate completions for one row next to real ones (the gold and drawn completions);
    a PropertyResult when one is paid too much, else how many were scored. The first row gets every generic
    attack; later rows the ones built from the row's answer, and half the others in turn, to save time."""
    checks, lo, hi = subject.spec.checks, subject.lo, subject.hi
    declared: list = []
    if checks.degenerate is not None:
        try:
            declared = checks.degenerate(prompt, inputs.by_name(vi, columns), subject.variants[vi].params)
        except Exception as error:
            return subject.result("degenerate", FAIL, f"degenerate() raised {type(error).__name__}: {first_line(error)}",
                                  subject.example(vi, [Item("", columns, prompt)]))
        declared, problem = degenerate_pairs(declared)
        if problem:
            return subject.result("degenerate", FAIL, problem, subject.example(vi, [Item("", columns, prompt)]))
    real = [inputs.gold_item(vi, columns, prompt)] if checks.gold_example is not None else []
    real += [inputs.item(vi, choice, columns, prompt) for choice in choices]
    lengths = sorted({len(item.text) for item in real if item.text}, reverse=True)[:3]
    suspects: dict[str, str] = {}  # text -> label: each text scored once, under its first label
    for label, text in generic_degenerate(prompt) + [p for n in lengths for p in padding_to(n)] + declared:
        suspects.setdefault(text, label)
    gold = real[0].text if checks.gold_example is not None else ""
    parts = ATTACK_PARTS if index == 0 else ("numbers", ATTACK_PARTS[1 + index % 2])
    controls: dict[str, str] = {}  # attack text -> the text it must also outscore to count as paid
    for label, text, control in attacks(prompt, columns, [gold], lengths=[len(gold)] if gold else lengths[:1],
                                        parts=parts):
        if text not in suspects:
            suspects[text], controls[text] = label, control
    controls_needed = [c for c in dict.fromkeys(controls.values()) if c not in suspects]
    items = (real + [Item(text, columns, prompt, label) for text, label in suspects.items()]
             + [Item(text, columns, prompt, "control") for text in controls_needed])
    outcome = subject.call(vi, items)
    if outcome.raised is not None or not outcome.scores:
        return 0  # a crash is the output property's finding
    scores, k = outcome.scores, len(real)
    by_text = {item.text: score for item, score in zip(items[k:], scores[k:])}
    scores, items = scores[:len(scores) - len(controls_needed)], items[:len(items) - len(controls_needed)]
    paid = [s for s in scores[:k] if s is not None]
    top = max(paid) if paid else None
    best = max(scores, key=lambda s: -math.inf if s is None else s)
    best = lo if best is None else best
    far = not math.isfinite(hi) or best - lo < FAR_BELOW_SHARE * (hi - lo)
    threshold = lo + share * (hi - lo)
    tol = 1e-9 * max(1.0, abs(lo), abs(top or 0.0), abs(threshold) if math.isfinite(threshold) else 0.0)
    over = []
    for item, score in zip(items[k:], scores[k:]):
        if score is None:
            continue
        control = by_text.get(controls.get(item.text))
        if item.text in controls and control is not None and score <= control + tol:
            continue  # paid no more than its control (one wrong number there, one character in the tags, nothing at all)
        if math.isfinite(hi) and score > threshold + tol:
            over.append((score, item))
        elif far and top is not None and score > lo + tol and score >= top - tol:
            over.append((score, item))
    if not over:
        return sum(s is not None for s in scores[k:])
    score, item = max(over, key=lambda found: found[0])  # the first of the highest
    if far:
        best_real = real[scores[:k].index(top)]
        bound = (f"the best score of a real completion (the gold or a drawn one), {top!r} for "
                 f"{clip_repr(best_real.text)}; the declared high bound {hi:g} is far above anything the "
                 f"reward paid, so it is no guide")
        detail = f"{item.label}, {clip_repr(item.text)}, scored {score!r}, at or above that best score"
        limit = {"best real completion": clip(best_real.text), "best real score": top}
    else:
        bound = (f"{threshold:g}, {share:g} of the way from the low bound {lo:g} to the high bound "
                 f"{hi:g} (degenerate_share={share:g})")
        detail = f"{item.label}, {clip_repr(item.text)}, scored {score!r}, above {threshold:g}"
        limit = {"threshold": threshold}
    others = [f"{o.label} ({s!r})" for s, o in over if o is not item]
    if others:
        detail += f"; {len(others)} more paid too: " + ", ".join(others[:4]) + (", ..." if len(others) > 4 else "")
        limit["also paid"] = others
    message = f"degenerate violated: {describe(prop, subject, threshold=bound)}; {detail}"
    return subject.result("degenerate", FAIL, message, subject.example(vi, [item], scores=[score], **limit))


def rows(prop: Property, subject: RewardUnderTest, inputs: Inputs, deadline: float) -> PropertyResult:
    variant, checks = subject.reward, subject.spec.checks
    if inputs.rows:
        sample, where = [columns_of(variant, row) for row in inputs.rows], "dataset rows"
    elif checks.column_strategy is not None:
        try:
            sample = inputs.drawn(checks.column_strategy(variant.params).map(lambda row: columns_of(variant, row)),
                                 ROW_SURVEY_SIZE, deadline)
        except Exception as error:
            return subject.result("rows", FAIL, f"the check could not run: the reward's column_strategy raised "
                                                f"{type(error).__name__}: {first_line(error)}")
        where = "rows drawn from the reward's column_strategy"
    else:
        names = ", ".join(variant.columns)
        return subject.result("rows", SKIP, f"the reward declares no column_strategy, so the checks drew its columns "
                                            f"({names}) as random text; " + prop.declare)
    if checks.row_problems is None:
        return subject.result("rows", SKIP, "the reward declares no row_problems; " + DECLARE_ROW_PROBLEMS)
    found: dict[str, list] = {}  # problem -> [rows with it, examples]
    looked = 0
    for row in sample:
        if looked and time.monotonic() > deadline:
            break
        looked += 1
        try:
            problems = list(checks.row_problems(inputs.by_name(0, row), variant.params) or [])
        except Exception as error:
            problems = [(f"row_problems() raised {type(error).__name__}", first_line(error))]
        for problem in dict.fromkeys(str(p) for p, _ in problems):
            found.setdefault(problem, [0, []])[0] += 1
        for problem, example in problems:
            examples = found[str(problem)][1]
            if len(examples) < 3 and clip(str(example), 60) not in examples:
                examples.append(clip(str(example), 60))
    if not found:
        return subject.result("rows", PASS, f"row_problems found nothing in {looked} {where}", examples=looked)
    summary = [{"problem": problem, "rows": count, "of": looked, "examples": examples}
               for problem, (count, examples) in sorted(found.items(), key=lambda f: -f[1][0])]
    return subject.result("rows", WARN, "; ".join(problem_line(p) for p in summary),
                          {"problems": summary, "looked_at": where}, looked)


def columns(prop: Property, subject: RewardUnderTest, inputs: Inputs, deadline: float) -> PropertyResult | None:
    """A failure when the dataset rows lack a column the reward reads (then nothing else can run), else no line."""
    if not inputs.rows:
        return None
    present = set().union(*(row.keys() for row in inputs.rows))
    missing = [(name, source) for name, source in subject.reward.columns.items()
               if source not in present and name not in subject.reward.optional]
    if not missing:
        return None
    name, source = missing[0]
    hint = (f"set --reward-arg {subject.name}.{name}_column=COLUMN"
            if any(p.name == f"{name}_column" for p in subject.spec.params) else "use a dataset that has it")
    return subject.result("columns", FAIL, f"the dataset has no column '{source}', which reward '{subject.name}' reads; "
                                           f"its columns: {', '.join(sorted(present)) or '(none)'}; {hint}")
