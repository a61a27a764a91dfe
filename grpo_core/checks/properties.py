"""The generic properties every reward is checked for, and the direction and gold properties a reward declares."""

from __future__ import annotations

import math
import time

from grpo_core.checks.display import clip_repr, first_line
from grpo_core.checks.report import FAIL, PASS, SKIP, PropertyResult
from grpo_core.checks.subject import Item


def same_score(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


class GenericProperties:
    """The generic, direction and gold properties, for RewardCheck."""

    def check_output(self, deadline: float) -> PropertyResult:
        counters = {"scored": 0, "fail": True, "reason": "the reward scored nothing: every generated completion "
                    "scored None, and a reward that never gives a score teaches nothing"}

        def check(example):
            vi, items, shape = example
            outcome = self.call(vi, items, shape)
            for problem in self.diagnose(vi, items, shape, outcome):
                if problem.kind in ("raised", "output"):
                    at = items[problem.index].text if problem.index is not None else None
                    where = f" on {clip_repr(at)}" if at is not None else f" on a batch of {len(items)}"
                    verb = "raised " if problem.kind == "raised" else ""
                    raise self._violation("output", f"it {verb}{problem.detail}{where}", self.example(vi, items, shape))
            scores = outcome.scores
            if outcome.raised is None and (not isinstance(scores, list) or len(scores) != len(items)
                                           or any(s is not None and not isinstance(s, float) for s in scores)):
                raise self._violation("output", f"the adapter returned {clip_repr(scores)} for {len(items)} completions",
                                      self.example(vi, items, shape))
            counters["scored"] += sum(s is not None for s in scores or [])

        # Plain strings only: a crash on chat messages alone is the shapes property's finding.
        result = self._hypothesis("output", self._batches(shapes=("plain",)), check, deadline, counters)
        self._output_ok = result.status != FAIL
        return result

    def check_bounds(self, deadline: float) -> PropertyResult:
        counters = {"scored": 0}

        def check(example):
            vi, items, shape = example
            outcome = self.call(vi, items, shape)
            if outcome.raised is not None or outcome.errors:
                for problem in self.diagnose(vi, items, shape, outcome):
                    if problem.kind == "non-finite":
                        at = items[problem.index].text if problem.index is not None else None
                        where = f" for {clip_repr(at)}" if at is not None else ""
                        raise self._violation("bounds", f"it {problem.detail}{where}", self.example(vi, items, shape))
            for item, score in zip(items, outcome.scores or []):
                if score is None:
                    continue
                counters["scored"] += 1
                if not (self.lo <= score <= self.hi):
                    raise self._violation("bounds", f"{clip_repr(item.text)} scored {score!r}",
                                          self.example(vi, items, shape, outcome.scores))

        return self._hypothesis("bounds", self._batches(), check, deadline, counters)

    def check_gold(self, deadline: float) -> PropertyResult:
        if self.spec.checks.gold_example is None:
            return self._result("gold", SKIP, "the reward declares no gold completion")
        counters = {"scored": 0, "reason": "gold_example() gave no completion for any row drawn"}

        def check(example):
            vi, columns, prompt = example
            params = self.variants[vi].params
            try:
                gold = self.spec.checks.gold_example(self._by_name(vi, columns), params)
            except Exception as error:
                raise self._violation("gold", f"gold_example() raised {type(error).__name__}: {error}",
                                      self.example(vi, [Item("", columns, prompt)])) from None
            if gold is None:
                return
            item = Item(gold, columns, prompt)
            outcome = self.call(vi, [item])
            score = (outcome.scores or [None])[0]
            counters["scored"] += 1
            if score is None or not math.isclose(score, self.hi, rel_tol=1e-9, abs_tol=1e-9):
                detail = f"the gold completion {clip_repr(gold)} scored {score!r}"
                if score is None and not (outcome.raised or outcome.errors):
                    detail += " (not scorable): the reward cannot score its own gold example"
                if score is None and (outcome.raised or outcome.errors):
                    problems = self.diagnose(vi, [item], "plain", outcome)
                    detail += f" (it raised {problems[0].detail})"
                raise self._violation("gold", detail, self.example(vi, [item], scores=[score]))

        strategy = self._per_variant("gold", lambda vi: (self._row(vi), self._prompts()))
        return self._hypothesis("gold", strategy, check, deadline, counters)

    def check_direction(self, direction, deadline: float) -> PropertyResult:
        from grpo_core.rewards.reward import completion_text

        prop = f"direction: {direction.description}"
        counters = {"scored": 0, "fail": True,
                    "reason": "no pair drawn could be compared: in every pair the better or the worse completion "
                              "scored None, so the direction was never shown to hold"}

        def check(example):
            vi, (better, worse, columns), prompt = example
            columns = self._columns(self.variants[vi], columns)
            items = [Item(completion_text(better), columns, prompt), Item(completion_text(worse), columns, prompt)]
            outcome = self.call(vi, items)
            if outcome.raised is not None or outcome.errors:
                problems = [p for p in self.diagnose(vi, items, "plain", outcome) if p.kind != "non-finite"]
                if problems:
                    which = {0: "better ", 1: "worse "}.get(problems[0].index, "")
                    raise self._violation("direction", f"scoring the {which}completion raised {problems[0].detail}",
                                          self.example(vi, items), description=direction.description)
            b, w = (outcome.scores or [None, None])[:2]
            if b is None or w is None:  # a pair with an unscored side shows nothing, so it does not count as held
                return
            counters["scored"] += 1
            ok = b > w if direction.strict else b >= w - 1e-9 * max(1.0, abs(w))
            if not ok:
                sign = "<=" if direction.strict else "<"
                raise self._violation(
                    "direction",
                    f"better={clip_repr(items[0].text)} scored {b!r} {sign} worse={clip_repr(items[1].text)} scored {w!r}",
                    self.example(vi, items, scores=[b, w]),
                    description=direction.description,
                )

        strategy = self._per_variant(prop, lambda vi: (direction.pairs(self.variants[vi].params), self._prompts()))
        return self._hypothesis(prop, strategy, check, deadline, counters)

    def check_deterministic(self, deadline: float) -> PropertyResult:
        counters = {"scored": 0}

        def check(example):
            vi, items, shape = example
            first = self.call(vi, items, shape)
            second = self.call(vi, items, shape)
            if (first.raised is None) != (second.raised is None) or first.errors != second.errors:
                raise self._violation("deterministic", "it raised on one call and not on the other",
                                      self.example(vi, items, shape))
            for i, (a, b) in enumerate(zip(first.scores or [], second.scores or [])):
                counters["scored"] += a is not None
                if not same_score(a, b):
                    raise self._violation("deterministic", f"{clip_repr(items[i].text)} scored {a!r}, then {b!r}",
                                          self.example(vi, items, shape, scores=first.scores, second_scores=second.scores))

        return self._hypothesis("deterministic", self._batches(), check, deadline, counters)

    def check_batch(self, deadline: float) -> PropertyResult:
        counters = {"scored": 0}

        def check(example):
            vi, items, shape = example
            together = self.call(vi, items, shape)
            if together.raised is not None:
                return
            alone = [self.call(vi, [item], shape) for item in items]
            reverse = self.call(vi, items[::-1], shape)
            for i, item in enumerate(items):
                a = alone[i].scores[0] if alone[i].scores else None
                b = together.scores[i]
                r = reverse.scores[len(items) - 1 - i] if reverse.scores else b
                counters["scored"] += a is not None
                for other, where in ((b, f"in a batch of {len(items)}"), (r, "in the same batch reversed")):
                    if not same_score(a, other):
                        raise self._violation(
                            "batch-independent",
                            f"{clip_repr(item.text)} scored {a!r} alone but {other!r} {where}; if that is intended "
                            f"(scores relative to the group), declare RewardSpec(group_relative=True)",
                            self.example(vi, items, shape, scores=together.scores,
                                         alone_scores=[o.scores[0] if o.scores else None for o in alone]),
                        )

        return self._hypothesis("batch-independent", self._batches(min_size=2), check, deadline, counters)

    def check_shapes(self, deadline: float) -> PropertyResult:
        counters = {"scored": 0}

        def check(example):
            vi, items, _ = example
            plain = self.call(vi, items, "plain")
            chat = self.call(vi, items, "chat")
            if plain.raised is not None and chat.raised is not None:
                return
            for broken, fine, shape in ((chat, plain, "chat"), (plain, chat, "plain")):
                if broken.raised is not None or broken.errors > fine.errors:
                    problems = self.diagnose(vi, items, shape, broken)
                    other = "plain strings" if shape == "chat" else "chat messages"
                    raise self._violation(
                        "shapes",
                        f"{'chat-shaped' if shape == 'chat' else 'plain-string'} input raised {problems[0].detail}, "
                        f"while {other} scored {fine.scores!r}",
                        self.example(vi, items, shape),
                    )
            for i, (a, b) in enumerate(zip(plain.scores, chat.scores)):
                counters["scored"] += a is not None
                if not same_score(a, b):
                    raise self._violation(
                        "shapes", f"{clip_repr(items[i].text)} scored {a!r} as a plain string but {b!r} as a chat message",
                        self.example(vi, items, "plain", scores=plain.scores, chat_scores=chat.scores),
                    )

        return self._hypothesis("shapes", self._batches(shapes=("plain",)), check, deadline, counters)

    def check_hostile(self, deadline: float) -> PropertyResult:
        from hypothesis import find, settings

        from grpo_core.checks.texts import HOSTILE_TEXTS, hostile_texts

        started = time.monotonic()
        try:
            if self.rows:
                columns = self._columns(self.reward, self.rows[0])
            else:  # the simplest valid row
                columns = find(self._row(0), lambda row: True, settings=settings(database=None))
        except Exception as error:
            return self._result("hostile", FAIL, f"the check could not run: the reward's column_strategy raised "
                                                 f"{type(error).__name__}: {first_line(error)}")
        kinds = ("raised", "output") if self._output_ok else ("raised",)
        fixed = [Item(text, columns, "", label) for label, text in HOSTILE_TEXTS]

        def out_of_bounds(items, outcome):
            for index, score in enumerate(outcome.scores or []):
                if score is not None and not (self.lo <= score <= self.hi):
                    return index, f"scored {score!r}, outside the declared bounds ({self.lo}, {self.hi})"
            return None
        # Items under a hard timeout go to the adapter together, as its worker pool overlaps them (in pairs
        # when time is short, so the deadline is looked at between them); others go one by one.
        size = 1 if self.spec.timeout is None else len(fixed) if deadline == math.inf else 2
        groups = [fixed[i:i + size] for i in range(0, len(fixed), size)]
        checked = 0
        for group in groups:
            if time.monotonic() > deadline:
                return self._result("hostile", PASS, f"stopped after {checked} of {len(fixed)} fixed hostile texts: "
                                                     "the time budget was spent", examples=checked)
            outcome = self.call(0, group)
            for problem in self.diagnose(0, group, "plain", outcome):
                if problem.kind in kinds:
                    item = group[problem.index or 0]
                    verb = "raised " if problem.kind == "raised" else ""
                    return self._result(
                        "hostile", FAIL,
                        f"hostile violated: {self._describe('hostile')}; on {item.label} it {verb}{problem.detail}",
                        self.example(0, [item]), checked + 1)
            bad = out_of_bounds(group, outcome)
            if bad is not None:
                item = group[bad[0]]
                return self._result("hostile", FAIL,
                                    f"hostile violated: {self._describe('hostile')}; on {item.label} it {bad[1]}",
                                    self.example(0, [item], scores=outcome.scores), checked + 1)
            checked += len(group)

        def check(example):
            vi, text, columns = example
            item = Item(text, columns, text[:50])
            outcome = self.call(vi, [item])
            for problem in self.diagnose(vi, [item], "plain", outcome):
                if problem.kind in kinds:
                    verb = "raised " if problem.kind == "raised" else ""
                    raise self._violation("hostile", f"on {clip_repr(text)} it {verb}{problem.detail}",
                                          self.example(vi, [item]))
            bad = out_of_bounds([item], outcome)
            if bad is not None:
                raise self._violation("hostile", f"on {clip_repr(text)} it {bad[1]}",
                                      self.example(vi, [item], scores=outcome.scores))

        nasty = hostile_texts(include_fixed=False)
        strategy = self._per_variant("hostile", lambda vi: (nasty, self._row(vi)))
        result = self._hypothesis("hostile", strategy, check, deadline)
        result.examples += checked
        result.seconds = time.monotonic() - started
        return result
