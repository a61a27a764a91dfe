"""The exploit audit: completions that skip the task must not be paid, and dataset rows the reward cannot use."""

from __future__ import annotations

import math
import time

from grpo_core.checks.catalogue import DECLARE, GENERIC_ONLY, PROPERTIES
from grpo_core.checks.display import clip, clip_repr, first_line
from grpo_core.checks.report import FAIL, PASS, SKIP, WARN, PropertyResult, problem_line
from grpo_core.checks.subject import Item


# Above the low bound by less than this share of the bounds' range, the reward pays "nothing": its declared
# upper bound says nothing about what it pays, so a degenerate completion is compared with real ones instead.
FAR_BELOW_SHARE = 0.01
ROW_SURVEY_SIZE = 50  # rows drawn from a reward's column_strategy to look for row problems


def degenerate_pairs(value) -> tuple[list, str]:
    """The (label, completion text) pairs a degenerate() callable returned, or why they are not that."""
    from grpo_core.rewards.reward import completion_text

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


class Audit:
    """The exploit audit's properties, for RewardCheck."""

    def check_degenerate(self, deadline: float) -> PropertyResult:
        share = float(self.spec.checks.degenerate_share)
        if share >= 1.0:
            return self._result("degenerate", SKIP, f"the reward sets degenerate_share={share:g}, so it may pay a "
                                                    "completion that skips the task up to its high bound")
        from hypothesis import strategies as st

        try:
            strategy = self._per_variant("degenerate", lambda vi: (
                self._prompted_rows(vi), st.lists(self._choices(vi), min_size=1, max_size=3)))
            examples = self._drawn(strategy, self.max_examples, deadline)
        except Exception as error:
            return self._result("degenerate", FAIL, f"the check could not run: drawing rows raised "
                                                    f"{type(error).__name__}: {first_line(error)}")
        rows = tried = 0
        stopped = False
        for vi, (columns, prompt), choices in examples:
            if rows and time.monotonic() > deadline:
                stopped = True
                break
            found = self._audit_row(vi, columns, prompt, choices, share, rows)
            if isinstance(found, PropertyResult):
                found.examples = rows + 1
                return found
            rows += 1
            tried += found
        how = (f"{tried} degenerate completions scored on {rows} row{'s' * (rows != 1)}"
               + (", then the time budget was spent" if stopped else ""))
        if self.spec.checks.degenerate is None:
            how += f"; only the generic ones, as the reward {GENERIC_ONLY}"
        return self._result("degenerate", PASS, how, examples=rows)

    def _audit_row(self, vi: int, columns: dict, prompt: str, choices: list, share: float, index: int = 0):
        """Score the degenerate completions for one row next to real ones (the gold and drawn completions);
        a PropertyResult when one is paid too much, else how many were scored. The first row gets every generic
        attack; later rows the ones built from the row's answer, and half the others in turn, to save time."""
        from grpo_core.checks.degenerate import ATTACK_PARTS, attacks, generic_degenerate, padding_to

        params = self.variants[vi].params
        declared: list = []
        if self.spec.checks.degenerate is not None:
            try:
                declared = self.spec.checks.degenerate(prompt, self._by_name(vi, columns), params)
            except Exception as error:
                return self._result("degenerate", FAIL, f"degenerate() raised {type(error).__name__}: {first_line(error)}",
                                    self.example(vi, [Item("", columns, prompt)]))
            declared, problem = degenerate_pairs(declared)
            if problem:
                return self._result("degenerate", FAIL, problem, self.example(vi, [Item("", columns, prompt)]))
        real = [self._gold_item(vi, columns, prompt)] if self.spec.checks.gold_example is not None else []
        real += [self._item(vi, choice, columns, prompt) for choice in choices]
        lengths = sorted({len(item.text) for item in real if item.text}, reverse=True)[:3]
        suspects: dict[str, str] = {}  # text -> label: each text scored once, under its first label
        for label, text in generic_degenerate(prompt) + [p for n in lengths for p in padding_to(n)] + declared:
            suspects.setdefault(text, label)
        gold = real[0].text if self.spec.checks.gold_example is not None else ""
        parts = ATTACK_PARTS if index == 0 else ("numbers", ATTACK_PARTS[1 + index % 2])
        controls: dict[str, str] = {}  # attack text -> the text it must also outscore to count as paid
        for label, text, control in attacks(prompt, columns, [gold], lengths=[len(gold)] if gold else lengths[:1],
                                            parts=parts):
            if text not in suspects:
                suspects[text], controls[text] = label, control
        controls_needed = [c for c in dict.fromkeys(controls.values()) if c not in suspects]
        items = (real + [Item(text, columns, prompt, label) for text, label in suspects.items()]
                 + [Item(text, columns, prompt, "control") for text in controls_needed])
        outcome = self.call(vi, items)
        if outcome.raised is not None or not outcome.scores:
            return 0  # a crash is the output property's finding
        scores, k = outcome.scores, len(real)
        by_text = {item.text: score for item, score in zip(items[k:], scores[k:])}
        scores, items = scores[:len(scores) - len(controls_needed)], items[:len(items) - len(controls_needed)]
        paid = [s for s in scores[:k] if s is not None]
        top = max(paid) if paid else None
        best = max(scores, key=lambda s: -math.inf if s is None else s)
        best = self.lo if best is None else best
        far = not math.isfinite(self.hi) or best - self.lo < FAR_BELOW_SHARE * (self.hi - self.lo)
        threshold = self.lo + share * (self.hi - self.lo)
        tol = 1e-9 * max(1.0, abs(self.lo), abs(top or 0.0), abs(threshold) if math.isfinite(threshold) else 0.0)
        over = []
        for item, score in zip(items[k:], scores[k:]):
            if score is None:
                continue
            control = by_text.get(controls.get(item.text))
            if item.text in controls and control is not None and score <= control + tol:
                continue  # paid no more than its control (one wrong number there, one character in the tags, nothing at all)
            if math.isfinite(self.hi) and score > threshold + tol:
                over.append((score, item))
            elif far and top is not None and score > self.lo + tol and score >= top - tol:
                over.append((score, item))
        if not over:
            return sum(s is not None for s in scores[k:])
        score, item = max(over, key=lambda found: found[0])  # the first of the highest
        if far:
            best_real = real[scores[:k].index(top)]
            bound = (f"the best score of a real completion (the gold or a drawn one), {top!r} for "
                     f"{clip_repr(best_real.text)}; the declared high bound {self.hi:g} is far above anything the "
                     f"reward paid, so it is no guide")
            detail = f"{item.label}, {clip_repr(item.text)}, scored {score!r}, at or above that best score"
            limit = {"best real completion": clip(best_real.text), "best real score": top}
        else:
            bound = (f"{threshold:g}, {share:g} of the way from the low bound {self.lo:g} to the high bound "
                     f"{self.hi:g} (degenerate_share={share:g})")
            detail = f"{item.label}, {clip_repr(item.text)}, scored {score!r}, above {threshold:g}"
            limit = {"threshold": threshold}
        others = [f"{o.label} ({s!r})" for s, o in over if o is not item]
        if others:
            detail += f"; {len(others)} more paid too: " + ", ".join(others[:4]) + (", ..." if len(others) > 4 else "")
            limit["also paid"] = others
        message = f"degenerate violated: {PROPERTIES['degenerate'].format(threshold=bound)}; {detail}"
        return self._result("degenerate", FAIL, message, self.example(vi, [item], scores=[score], **limit))

    def check_rows(self, deadline: float) -> PropertyResult:
        variant = self.reward
        if self.rows:
            rows, where = [self._columns(variant, row) for row in self.rows], "dataset rows"
        elif self.spec.checks.column_strategy is not None:
            try:
                rows = self._drawn(self.spec.checks.column_strategy(variant.params).map(lambda row: self._columns(variant, row)),
                                   ROW_SURVEY_SIZE, deadline)
            except Exception as error:
                return self._result("rows", FAIL, f"the check could not run: the reward's column_strategy raised "
                                                  f"{type(error).__name__}: {first_line(error)}")
            where = "rows drawn from the reward's column_strategy"
        else:
            names = ", ".join(variant.columns)
            return self._result("rows", SKIP, f"the reward declares no column_strategy, so the checks drew its columns "
                                              f"({names}) as random text; " + DECLARE["rows"])
        if self.spec.checks.row_problems is None:
            return self._result("rows", SKIP, "the reward declares no row_problems; " + DECLARE["row_problems"])
        found: dict[str, list] = {}  # problem -> [rows with it, examples]
        looked = 0
        for row in rows:
            if looked and time.monotonic() > deadline:
                break
            looked += 1
            try:
                problems = list(self.spec.checks.row_problems(self._by_name(0, row), variant.params) or [])
            except Exception as error:
                problems = [(f"row_problems() raised {type(error).__name__}", first_line(error))]
            for problem in dict.fromkeys(str(p) for p, _ in problems):
                found.setdefault(problem, [0, []])[0] += 1
            for problem, example in problems:
                examples = found[str(problem)][1]
                if len(examples) < 3 and clip(str(example), 60) not in examples:
                    examples.append(clip(str(example), 60))
        if not found:
            return self._result("rows", PASS, f"row_problems found nothing in {looked} {where}", examples=looked)
        summary = [{"problem": problem, "rows": count, "of": looked, "examples": examples}
                   for problem, (count, examples) in sorted(found.items(), key=lambda f: -f[1][0])]
        return self._result("rows", WARN, "; ".join(problem_line(p) for p in summary),
                            {"problems": summary, "looked_at": where}, looked)
