"""The generic properties every reward is checked for, and the direction and gold properties a reward declares.

Each is a function ``(prop, subject, inputs, deadline) -> PropertyResult`` that ``catalogue`` registers."""

from __future__ import annotations

import math
import time

from grpo_core.checks.display import clip_repr, first_line
from grpo_core.checks.inputs import Inputs, columns_of
from grpo_core.checks.registry import Property
from grpo_core.checks.executor import Hung, watched
from grpo_core.checks.results import FAIL, PASS, SKIP, PropertyResult
from grpo_core.checks.search import describe, search, violation
from grpo_core.checks.subject import Item, RewardUnderTest
from grpo_core.checks.texts import hostile_for, hostile_texts
from grpo_core.rewards.declared import Direction
from grpo_core.rewards.reward import completion_text


def same_score(a, b, tolerance: float = 0.0) -> bool:
    """Equal scores, to rounding (``tolerance``: the difference the reward declares as rounding, RewardChecks)."""
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=max(1e-12, tolerance))


def output(prop: Property, subject: RewardUnderTest, inputs: Inputs, deadline: float) -> PropertyResult:
    counters = {"scored": 0, "fail": True, "reason": "the reward scored nothing: every generated completion "
                "scored None, and a reward that never gives a score teaches nothing"}

    def check(example):
        vi, items, shape = example
        outcome = subject.call(vi, items, shape)
        for problem in subject.diagnose(vi, items, shape, outcome):
            if problem.kind in ("raised", "output"):
                at = items[problem.index].text if problem.index is not None else None
                where = f" on {clip_repr(at)}" if at is not None else f" on a batch of {len(items)}"
                verb = "raised " if problem.kind == "raised" else ""
                raise violation(prop, subject, f"it {verb}{problem.detail}{where}", subject.example(vi, items, shape))
        scores = outcome.scores
        if outcome.raised is None and (not isinstance(scores, list) or len(scores) != len(items)
                                       or any(s is not None and not isinstance(s, float) for s in scores)):
            raise violation(prop, subject, f"the Reward callable returned {clip_repr(scores)} for {len(items)} completions",
                            subject.example(vi, items, shape))
        counters["scored"] += sum(s is not None for s in scores or [])

    # Plain strings only: a crash on chat messages alone is the shapes property's finding.
    return search("output", subject, inputs, inputs.batches(shapes=("plain",)), check, deadline, counters)


def bounds(prop: Property, subject: RewardUnderTest, inputs: Inputs, deadline: float) -> PropertyResult:
    counters = {"scored": 0}

    def check(example):
        vi, items, shape = example
        outcome = subject.call(vi, items, shape)
        if outcome.raised is not None or outcome.errors:
            for problem in subject.diagnose(vi, items, shape, outcome):
                if problem.kind == "non-finite":
                    at = items[problem.index].text if problem.index is not None else None
                    where = f" for {clip_repr(at)}" if at is not None else ""
                    raise violation(prop, subject, f"it {problem.detail}{where}", subject.example(vi, items, shape))
        for item, score in zip(items, outcome.scores or []):
            if score is None:
                continue
            counters["scored"] += 1
            if not (subject.lo <= score <= subject.hi):
                raise violation(prop, subject, f"{clip_repr(item.text)} scored {score!r}",
                                subject.example(vi, items, shape, outcome.scores))

    return search("bounds", subject, inputs, inputs.batches(), check, deadline, counters)


def gold(prop: Property, subject: RewardUnderTest, inputs: Inputs, deadline: float) -> PropertyResult:
    counters = {"scored": 0, "reason": "gold_example() gave no completion for any row drawn"}

    def check(example):
        vi, columns, prompt = example
        params = subject.variants[vi].params
        try:
            gold = subject.spec.checks.gold_example(inputs.by_name(vi, columns), params)
        except Exception as error:
            raise violation(prop, subject, f"gold_example() raised {type(error).__name__}: {error}",
                            subject.example(vi, [Item("", columns, prompt)])) from None
        if gold is None:
            return
        item = Item(gold, columns, prompt)
        outcome = subject.call(vi, [item])
        score = (outcome.scores or [None])[0]
        counters["scored"] += 1
        if score is None or not math.isclose(score, subject.hi, rel_tol=1e-9, abs_tol=1e-9):
            detail = f"the gold completion {clip_repr(gold)} scored {score!r}"
            if score is None and not (outcome.raised or outcome.errors):
                detail += " (not scorable): the reward cannot score its own gold example"
            if score is None and (outcome.raised or outcome.errors):
                problems = subject.diagnose(vi, [item], "plain", outcome)
                detail += f" (it raised {problems[0].detail})"
            raise violation(prop, subject, detail, subject.example(vi, [item], scores=[score]))

    strategy = inputs.per_variant("gold", lambda vi: (inputs.row(vi), inputs.prompts()))
    return search("gold", subject, inputs, strategy, check, deadline, counters)


def direction(prop: Property, subject: RewardUnderTest, inputs: Inputs, deadline: float,
              target: Direction) -> PropertyResult:
    name = f"direction: {target.description}"
    counters = {"scored": 0, "fail": True,
                "reason": "no pair drawn could be compared: in every pair the better or the worse completion "
                          "scored None, so the direction was never shown to hold"}

    def check(example):
        vi, (better, worse, columns), prompt = example
        columns = columns_of(subject.variants[vi], columns)
        items = [Item(completion_text(better), columns, prompt), Item(completion_text(worse), columns, prompt)]
        outcome = subject.call(vi, items)
        if outcome.raised is not None or outcome.errors:
            problems = [p for p in subject.diagnose(vi, items, "plain", outcome) if p.kind != "non-finite"]
            if problems:
                which = {0: "better ", 1: "worse "}.get(problems[0].index, "")
                raise violation(prop, subject, f"scoring the {which}completion raised {problems[0].detail}",
                                subject.example(vi, items), description=target.description)
        b, w = (outcome.scores or [None, None])[:2]
        if b is None or w is None:  # a pair with an unscored side shows nothing, so it does not count as held
            return
        counters["scored"] += 1
        ok = b > w if target.strict else b >= w - 1e-9 * max(1.0, abs(w))
        if not ok:
            sign = "<=" if target.strict else "<"
            raise violation(
                prop, subject,
                f"better={clip_repr(items[0].text)} scored {b!r} {sign} worse={clip_repr(items[1].text)} scored {w!r}",
                subject.example(vi, items, scores=[b, w]), description=target.description)

    strategy = inputs.per_variant(name, lambda vi: (target.pairs(subject.variants[vi].params), inputs.prompts()))
    return search(name, subject, inputs, strategy, check, deadline, counters)


def deterministic(prop: Property, subject: RewardUnderTest, inputs: Inputs, deadline: float) -> PropertyResult:
    counters = {"scored": 0}

    def check(example):
        vi, items, shape = example
        first = subject.call(vi, items, shape)
        second = subject.call(vi, items, shape)
        if (first.raised is None) != (second.raised is None) or first.errors != second.errors:
            raise violation(prop, subject, "it raised on one call and not on the other",
                            subject.example(vi, items, shape))
        for i, (a, b) in enumerate(zip(first.scores or [], second.scores or [])):
            counters["scored"] += a is not None
            if not same_score(a, b, subject.spec.checks.tolerance):
                raise violation(prop, subject, f"{clip_repr(items[i].text)} scored {a!r}, then {b!r}",
                                subject.example(vi, items, shape, scores=first.scores, second_scores=second.scores))

    return search("deterministic", subject, inputs, inputs.batches(), check, deadline, counters)


def batch_independent(prop: Property, subject: RewardUnderTest, inputs: Inputs, deadline: float) -> PropertyResult:
    counters = {"scored": 0}

    def check(example):
        vi, items, shape = example
        together = subject.call(vi, items, shape)
        if together.raised is not None:
            return
        alone = [subject.call(vi, [item], shape) for item in items]
        reverse = subject.call(vi, items[::-1], shape)
        for i, item in enumerate(items):
            a = alone[i].scores[0] if alone[i].scores else None
            b = together.scores[i]
            r = reverse.scores[len(items) - 1 - i] if reverse.scores else b
            counters["scored"] += a is not None
            for other, where in ((b, f"in a batch of {len(items)}"), (r, "in the same batch reversed")):
                if not same_score(a, other, subject.spec.checks.tolerance):
                    raise violation(
                        prop, subject,
                        f"{clip_repr(item.text)} scored {a!r} alone but {other!r} {where}; if that is intended "
                        f"(scores relative to the group), declare RewardSpec(group_relative=True)",
                        subject.example(vi, items, shape, scores=together.scores,
                                        alone_scores=[o.scores[0] if o.scores else None for o in alone]),
                    )

    return search("batch-independent", subject, inputs, inputs.batches(min_size=2), check, deadline, counters)


def needs_determinism(subject: RewardUnderTest) -> str:
    """Why not to compare calls: scores that are not deterministic make the comparison say nothing."""
    if subject.status("deterministic") == FAIL:
        return "not run: scores are not deterministic (see deterministic), so comparing calls says nothing"
    return ""


def batch_skip(subject: RewardUnderTest) -> str:
    if subject.spec.group_relative:
        return "the reward declares group_relative=True: its scores depend on the batch by design"
    return needs_determinism(subject)


def shapes(prop: Property, subject: RewardUnderTest, inputs: Inputs, deadline: float) -> PropertyResult:
    counters = {"scored": 0}

    def check(example):
        vi, items, _ = example
        plain = subject.call(vi, items, "plain")
        chat = subject.call(vi, items, "chat")
        if plain.raised is not None and chat.raised is not None:
            return
        for broken, fine, shape in ((chat, plain, "chat"), (plain, chat, "plain")):
            if broken.raised is not None or broken.errors > fine.errors:
                problems = subject.diagnose(vi, items, shape, broken)
                other = "plain strings" if shape == "chat" else "chat messages"
                raise violation(
                    prop, subject,
                    f"{'chat-shaped' if shape == 'chat' else 'plain-string'} input raised {problems[0].detail}, "
                    f"while {other} scored {fine.scores!r}",
                    subject.example(vi, items, shape),
                )
        for i, (a, b) in enumerate(zip(plain.scores, chat.scores)):
            counters["scored"] += a is not None
            if not same_score(a, b, subject.spec.checks.tolerance):
                raise violation(
                    prop, subject, f"{clip_repr(items[i].text)} scored {a!r} as a plain string but {b!r} as a chat message",
                    subject.example(vi, items, "plain", scores=plain.scores, chat_scores=chat.scores),
                )

    return search("shapes", subject, inputs, inputs.batches(shapes=("plain",)), check, deadline, counters)


def hostile(prop: Property, subject: RewardUnderTest, inputs: Inputs, deadline: float) -> PropertyResult:
    from hypothesis import find, settings

    started = time.monotonic()
    try:
        if inputs.rows:
            columns = columns_of(subject.reward, inputs.rows[0])
        else:  # the simplest valid row
            columns = find(inputs.row(0), lambda row: True, settings=settings(database=None))
    except Exception as error:
        return subject.result("hostile", FAIL, f"the check could not run: the reward's column_strategy raised "
                                               f"{type(error).__name__}: {first_line(error)}")
    kinds = ("raised", "output") if subject.status("output") != FAIL else ("raised",)  # else output said it
    fixed = [Item(text, columns, "", label) for label, text in hostile_for(subject.max_completion_length)]

    def out_of_bounds(items, outcome):
        for index, score in enumerate(outcome.scores or []):
            if score is not None and not (subject.lo <= score <= subject.hi):
                return index, f"scored {score!r}, outside the declared bounds ({subject.lo}, {subject.hi})"
        return None

    # Items under a hard timeout go to the Reward callable together, as its worker pool overlaps them (in pairs
    # when time is short, so the deadline is looked at between them); others go one by one.
    size = 1 if subject.spec.timeout is None else len(fixed) if deadline == math.inf else 2
    groups = [fixed[i:i + size] for i in range(0, len(fixed), size)]
    checked = 0
    for group in groups:
        if time.monotonic() > deadline:
            return subject.result("hostile", PASS, f"stopped after {checked} of {len(fixed)} fixed hostile texts: "
                                                   "the time budget was spent", examples=checked)
        outcome = subject.call(0, group)
        for problem in subject.diagnose(0, group, "plain", outcome):
            if problem.kind in kinds:
                item = group[problem.index or 0]
                verb = "raised " if problem.kind == "raised" else ""
                return subject.result(
                    "hostile", FAIL,
                    f"hostile violated: {describe(prop, subject)}; on {item.label} it {verb}{problem.detail}",
                    subject.example(0, [item]), checked + 1)
        bad = out_of_bounds(group, outcome)
        if bad is not None:
            item = group[bad[0]]
            return subject.result("hostile", FAIL,
                                  f"hostile violated: {describe(prop, subject)}; on {item.label} it {bad[1]}",
                                  subject.example(0, [item], scores=outcome.scores), checked + 1)
        checked += len(group)

    def check(example):
        vi, text, columns = example
        item = Item(text, columns, text[:50])
        outcome = subject.call(vi, [item])
        for problem in subject.diagnose(vi, [item], "plain", outcome):
            if problem.kind in kinds:
                verb = "raised " if problem.kind == "raised" else ""
                raise violation(prop, subject, f"on {clip_repr(text)} it {verb}{problem.detail}",
                                subject.example(vi, [item]))
        bad = out_of_bounds([item], outcome)
        if bad is not None:
            raise violation(prop, subject, f"on {clip_repr(text)} it {bad[1]}",
                            subject.example(vi, [item], scores=outcome.scores))

    nasty = hostile_texts(include_fixed=False)
    strategy = inputs.per_variant("hostile", lambda vi: (nasty, inputs.row(vi)))
    result = search("hostile", subject, inputs, strategy, check, deadline)
    result.examples += checked
    result.seconds = time.monotonic() - started
    return result


SLOW_S = 15.0  # how long a call that missed its limit is given again: slow (a library's own 5 s limit) or hung


def time_limit(prop: Property, subject: RewardUnderTest, inputs: Inputs, deadline: float) -> PropertyResult:
    """Whether a call hung past its limit while the other properties ran. A call on a pathological input (a fixed
    hostile text, a built attack) is given ``SLOW_S`` more seconds once: one that then ends is slow on that input,
    said in a note, not a hang (a library's own time limit, as math-verify's); slow on ordinary text fails."""
    hung = subject.hung
    pathological = bool((hung.example or {}).get("input")) if hung is not None else False
    if hung is not None and hung.call is not None and subject.executor.mode == "process" and pathological:
        started = time.monotonic()
        try:
            subject.call(*hung.call, seconds=SLOW_S)
        except Hung:
            pass
        else:
            took = time.monotonic() - started
            return subject.result("time", PASS, f"slow, not hung: a call of {hung.items} completion"
                                  f"{'s' * (hung.items != 1)} ran past {hung.seconds:.1f} s and ended given longer, "
                                  f"in {took:.1f} s ({(hung.example or {}).get('input') or 'drawn text'}); hostile "
                                  f"texts of up to {_hostile_size(subject)}")
    if hung is not None:
        what = "no score" if hung.items == 1 else f"no scores for a batch of {hung.items}"
        where, _, function = getattr(subject.spec, "source", "").rpartition(":")
        limit = ("declare RewardSpec(timeout=...)" if not where else f"set {function}.timeout = 5 in its file"
                 if where.endswith(".py") else "call it from a function in a file of yours that sets .timeout = 5")
        message = (f"time violated: {describe(prop, subject)}; {what} after {hung.seconds:.1f} s "
                   f"(hostile texts of up to {_hostile_size(subject)}). Make it faster, or {limit} so it runs under "
                   f"a hard limit")
        return subject.result("time", FAIL, message, hung.example)
    message = f"hostile texts of up to {_hostile_size(subject)} (--max-completion-length)"
    if subject.timeouts:
        message += (f"; {subject.timeouts} completion{'s' * (subject.timeouts != 1)} hit the reward's own "
                    f"{subject.reward.timeout:g} s timeout and scored None")
    return subject.result("time", PASS, message)


def _hostile_size(subject: RewardUnderTest) -> str:
    return (f"{max(len(text) for _, text in hostile_for(subject.max_completion_length)):,} characters, sized to "
            f"{subject.max_completion_length} tokens")


def measured(prop: Property, subject: RewardUnderTest, inputs: Inputs, deadline: float, target) -> PropertyResult:
    """A check the plugin measures itself (``RewardChecks.measures``): its verdict and figure, as it gives them.
    Under a time budget, one it could not finish is not started, and one past its share is left unfinished."""
    name = f"{prop.name}: {target.name}"
    call = (lambda: target.measure(subject.reward, inputs.rows)) if target.rows else (lambda: target.measure(subject.reward))
    try:
        if deadline == math.inf or subject.budget_end == math.inf:
            outcome = call()
        else:
            now = time.monotonic()
            estimate = target.items * subject.latency if target.items and subject.latency else 0.0
            rest = subject.budget_end - now
            if estimate > rest:
                return subject.result(name, SKIP, f"not run: it scores about {target.items} completions, about "
                                      f"{estimate:.0f} s at the {subject.latency:.2g} s per completion the reward "
                                      f"took, more than the {max(rest, 0):.0f} s left of the time budget (--budget)")
            # A reward checked in full gives a measure the rest of its budget; a sized one, its share or what it needs.
            limit = max(1.0, rest if subject.sized is None else min(rest, max(deadline - now, 1.5 * estimate)))
            try:
                outcome = watched(call, (), limit)
            except Hung:
                return subject.result(name, SKIP, f"interrupted: it had not finished after {limit:.0f} s, its part "
                                      f"of the time budget (--budget)")
        passed, figure, *shown = outcome
    except Exception as error:  # the plugin's measure is code like any other: say how it broke
        return subject.result(name, FAIL, f"measuring it raised {type(error).__name__}: {error}")
    counterexample = shown[0] if shown and isinstance(shown[0], dict) and not passed else None
    return subject.result(name, PASS if passed else FAIL, str(figure), counterexample)
