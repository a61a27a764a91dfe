"""What a reward must do beside judging an answer: empty tags score below filled ones (``empty-tags``), a completion
scores the same however often and after whatever came before (``state``), and a penalty-only reward fires where it
should and nowhere else (``penalty``). Built on the right answers of ``right_answers``."""

from __future__ import annotations

import re

from grpo_core.checks.display import clip_repr
from grpo_core.checks.inputs import columns_of
from grpo_core.checks.results import FAIL, PASS, SKIP, PropertyResult
from grpo_core.checks.right_answers import (Row, example_of, paid_rows, scored_rows, alone, as_number, margin,
                                            prompt_tags, replaced, score, tagged, tolerance)
from grpo_core.checks.subject import Item, RewardUnderTest
from grpo_core.checks.texts import hostile_for
from grpo_core.rewards.reward import completion_text


def empty_tags(prop, subject: RewardUnderTest, inputs, deadline: float) -> PropertyResult | None:
    scored, tol = scored_rows(subject, inputs), tolerance(subject)
    row = scored.rows[0] if scored.rows else None
    prompt = row.prompt if row else (inputs.rows[0].get("prompt") if inputs.rows else "")
    prompt = "\n".join(completion_text(m) for m in prompt) if isinstance(prompt, list) else completion_text(prompt)
    gold = row.gold if row else "42"
    columns = row.columns if row else (columns_of(subject.reward, inputs.rows[0]) if inputs.rows else {})
    probe = Row(columns, prompt, gold)
    # The tags it pays for: the prompt's, else common ones, whichever it pays above the same text with each tag's
    # name misspelt (the same length: a reward that pays length or anything else is not a format reward)
    choices = [t for t in ([prompt_tags(prompt)] if prompt_tags(prompt) else []) + [["think", "answer"], ["think"],
                                                                                    ["reasoning", "answer"]]]
    top = tags = None
    for choice in choices:  # each layout as models write it: tags on their own lines, with a final newline or not
        for end in ("", "\n"):
            filled = tagged(choice, gold) + end
            misspelt = re.sub(r"<(/?)(\w)", lambda m: f"<{m.group(1)}x{m.group(2)}", filled)
            pair = [alone(subject, probe, text) for text in (filled, misspelt)]
            if None not in pair and pair[0] > pair[1] + tol:
                top, tags = pair[0], choice
                break
        if tags is not None:
            break
    if tags is None:  # it pays no tags above the same text with misspelt ones: not a format reward, no line
        return None
    empties = [("empty tags", tagged(tags, gold, blank="") + end), ("whitespace-only tags",
                                                                     tagged(tags, gold, blank=" ") + end),
               ("empty tags", tagged(tags, gold, blank="", compact=True) + end),
               ("the prompt's instruction copied back", prompt.strip())]
    scores = [top, None] + [alone(subject, probe, text) for _, text in empties]
    for (what, text), s in zip(empties, scores[2:]):
        if text and s is not None and s >= scores[0] - margin(subject):
            return subject.result(
                "empty-tags", FAIL, f"empty-tags violated: tags with nothing in them score below filled ones; {what}, "
                f"{clip_repr(text)}, scored {s!r}, as much as filled tags ({scores[0]!r})",
                example_of(subject, probe, [filled, text], [scores[0], s]), len(scores))
    return subject.result("empty-tags", PASS, f"empty tags scored below filled ones ({', '.join(tags)})",
                          examples=len(scores))


def state(prop, subject: RewardUnderTest, inputs, deadline: float) -> PropertyResult:
    """The right and a wrong answer on two fresh answers (never scored before), in opposite orders: a pure reward
    gives each the same score either way; a cache keyed by less than the completion, or a counter, does not."""
    rows, skipped = paid_rows(subject, inputs, "state")
    if skipped:
        return skipped
    row, paid = rows[0]
    label, form, _ = paid[0]
    number = as_number(row.gold)
    golds = [str(int(number) + 7919 + i) for i in (0, 1)] if number is not None and number.denominator == 1 \
        else [row.gold + "x7919", row.gold + "x7920"]
    seen, rows_and_texts = {}, []
    fresh_rows = [Row({k: (g if str(v).strip() == row.gold else v) for k, v in row.columns.items()}, row.prompt, g)
                  for g in golds]
    before = score(subject, fresh_rows[1], [replaced(form, row.gold, golds[0])])  # before it is scored on its own row
    for index, fresh in enumerate(golds):
        columns = {k: (fresh if str(v).strip() == row.gold else v) for k, v in row.columns.items()}
        fresh_row = Row(columns, row.prompt, fresh)
        right, wrong = replaced(form, row.gold, fresh), replaced(form, row.gold, str(fresh) + "1")
        rows_and_texts.append((fresh_row, right))
        order = [("right", right), ("wrong", wrong)] if index == 0 else [("wrong", wrong), ("right", right)]
        for kind, text in order + [(kind, text) for kind, text in order]:  # each twice in a row, alone
            got = score(subject, fresh_row, [text])
            if got is None:
                return subject.result("state", SKIP, "a fresh row could not be scored")
            seen.setdefault((kind, index), []).append(got[0])
    tol = tolerance(subject)
    values = {key: vals for key, vals in seen.items()}
    for kind in ("right", "wrong"):
        a, b = values[(kind, 0)], values[(kind, 1)]
        for first, second, how in ((a[0], a[1], "scored again"), (b[0], b[1], "scored again"),
                                   (a[0], b[0], "scored after the other answer to its row")):
            if (first is None) != (second is None) or first is not None and abs(first - second) > tol:
                return subject.result(
                    "state", FAIL, f"state violated: a completion scores the same however often and after whatever "
                    f"was scored before; the {kind} answer ({clip_repr(form)} with a fresh answer) scored {first!r} "
                    f"and then {second!r} when {how}: its score depends on earlier calls (a counter, or a cache keyed "
                    "by less than the completion)", None, 8)
    (first_row, first_right), (second_row, _) = rows_and_texts
    right_score = values[("right", 0)][0]
    moved = score(subject, second_row, [first_right])  # one row's right answer on another row, once it paid
    if moved and before and None not in (moved[0], before[0]) and abs(moved[0] - before[0]) > tol:
        return subject.result(
            "state", FAIL, f"state violated: a completion scores the same however often and after whatever was scored "
            f"before; {clip_repr(first_right)}, right for one row, scored {before[0]!r} on another row before it was "
            f"scored on its own, and {moved[0]!r} after: a cache keyed by the completion alone",
            example_of(subject, second_row, [first_right], moved), 9)
    twice = score(subject, first_row, [first_right, first_right])  # two right answers in one batch
    if twice and right_score is not None and any(s is None or abs(s - right_score) > tol for s in twice):
        return subject.result(
            "state", FAIL, f"state violated: a completion scores the same however often and after whatever was scored "
            f"before; the right answer scored {right_score!r} alone but {twice!r} twice in one batch: a bonus or a "
            "discount for what else is in the batch", example_of(subject, first_row, [first_right] * 2, twice), 10)
    return subject.result("state", PASS, "the same scores alone, twice, in either order, on another row and twice in "
                          "one batch, on fresh rows", examples=10)


def penalty(prop, subject: RewardUnderTest, inputs, deadline: float) -> PropertyResult:
    """A penalty-only reward fires on the longest completion a run can generate or on repetition, and never on a
    short completion (its top is what it leaves alone)."""
    tol = tolerance(subject)
    columns = columns_of(subject.reward, inputs.rows[0]) if inputs.rows else {}
    short = ["42", "The answer is 42."]  # token ids here are bytes: short in any tokenizer's count
    long = [text for label, text in hostile_for(subject.max_completion_length) if "of one letter" in label]
    long += [("the answer is 42. " * 1000)[:len(long[0]) if long else 4096]]
    outcome = subject.call(0, [Item(t, columns, "") for t in short + long])
    if outcome.raised is not None or not outcome.scores:
        return subject.result("penalty", SKIP, "its scores could not be read (see output)")
    scores = outcome.scores
    for text, s in zip(short, scores):
        if s is not None and s < subject.hi - tol:
            return subject.result("penalty", FAIL, f"penalty violated: a short completion, {clip_repr(text)}, is "
                                  f"penalised ({s!r}, below its top {subject.hi:g})",
                                  subject.example(0, [Item(text, columns, "")], scores=[s]), len(scores))
    if not any(s is not None and s < subject.hi - tol for s in scores[len(short):]):
        return subject.result("penalty", FAIL, f"penalty violated: it never fires; completions as long as a run "
                              f"generates ({subject.max_completion_length} tokens) and repetitive ones scored "
                              f"{scores[len(short):]!r}, its top", None, len(scores))
    return subject.result("penalty", PASS, "it fires on long or repetitive completions and leaves short ones alone",
                          examples=len(scores))
