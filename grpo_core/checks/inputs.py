"""Input strategies: the rows, prompts and completions the checks draw for a reward under test."""

from __future__ import annotations

import copy
import math
import time
from typing import Callable

from grpo_core.checks.executor import OutOfTime
from grpo_core.checks.subject import Item, RewardUnderTest
from grpo_core.checks.texts import texts
from grpo_core.rewards.reward import Reward, completion_text


def prompt_of(row) -> str:
    """The question a row asks: a plain prompt, or a chat prompt's last user turn (not the worked
    examples before it, whose answers are not the model's to copy)."""
    if not isinstance(row, dict):
        return ""
    prompt = row.get("prompt")
    if isinstance(prompt, (list, tuple)):
        asked = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        return completion_text(asked[-1]) if asked else ""
    return completion_text(prompt)


def columns_of(variant: Reward, row: dict) -> dict:
    """A row keyed by dataset columns, from a dict keyed by dataset columns or by the reward's names."""
    row = dict(row or {})
    return {source: row[source] if source in row else row.get(name) for name, source in variant.columns.items()}


class Inputs:
    """What the checks draw for one reward under test: from its real ``rows`` when given (dicts of dataset
    columns), else from what the reward declares, else drawn text; ``max_examples`` per property, from ``seed``."""

    def __init__(self, subject: RewardUnderTest, rows: list[dict] | None, seed: int, max_examples: int) -> None:
        self.subject = subject
        self.spec = subject.spec
        self.variants = subject.variants
        self.rows = rows
        self.seed = seed
        self.max_examples = max(1, int(max_examples))
        self.asked = self.max_examples  # before a time budget shortened it (sized)
        self._strategies: dict = {}

    def sized(self, max_examples: int) -> Inputs:
        """The same inputs (and strategies) with another number of examples per property."""
        other = copy.copy(self)
        other.max_examples = max(1, int(max_examples))
        return other

    def row(self, vi: int):
        """Strategy of column dicts (dataset column -> value) for variant ``vi``."""
        key = ("row", vi)
        if key not in self._strategies:
            from hypothesis import strategies as st

            variant = self.variants[vi]
            if self.rows:
                strategy = st.sampled_from(self.rows).map(lambda row: columns_of(variant, row))
            elif self.spec.checks.column_strategy is not None:
                strategy = self.spec.checks.column_strategy(variant.params).map(lambda row: columns_of(variant, row))
            else:
                strategy = st.fixed_dictionaries({source: texts(20) for source in set(variant.columns.values())})
            self._strategies[key] = strategy
        return self._strategies[key]

    def by_name(self, vi: int, columns: dict) -> dict:
        """A row keyed by dataset columns, keyed by the reward's own names for them instead."""
        return {name: columns.get(source) for name, source in self.variants[vi].columns.items()}

    def _cached(self, key, build):
        """Strategies are built once: hypothesis pays to validate every new strategy object it draws from."""
        if key not in self._strategies:
            self._strategies[key] = build()
        return self._strategies[key]

    def prompts(self):
        def build():
            from hypothesis import strategies as st

            if self.rows and any("prompt" in row for row in self.rows):
                return st.sampled_from([prompt_of(row) for row in self.rows])
            return texts(30)

        return self._cached("prompts", build)

    def choices(self, vi: int):
        """What an ordinary completion is, for variant ``vi``: drawn text, one side of a direction's
        pair (with the pair's row), or the gold completion for the group's row."""

        def build():
            from hypothesis import strategies as st

            variant = self.variants[vi]
            choices = [texts().map(lambda text: ("text", text, None))]
            for direction in self.spec.checks.directions:
                choices.append(st.tuples(direction.pairs(variant.params), st.booleans()).map(
                    lambda d: ("pair", completion_text(d[0][0] if d[1] else d[0][1]), columns_of(variant, d[0][2]))
                ))
            if self.spec.checks.gold_example is not None:
                choices.append(st.just(("gold", None, None)))
            return st.one_of(choices)

        return self._cached(("choices", vi), build)

    def item(self, vi: int, choice: tuple, columns: dict, prompt: str) -> Item:
        kind, text, own_columns = choice
        if kind == "gold":
            return self.gold_item(vi, columns, prompt)
        return Item(text, own_columns if kind == "pair" else columns, prompt)

    def gold_item(self, vi: int, columns: dict, prompt: str) -> Item:
        try:
            gold = self.spec.checks.gold_example(self.by_name(vi, columns), self.variants[vi].params)
        except Exception:
            gold = None  # the gold property reports this
        return Item(gold if isinstance(gold, str) else "", columns, prompt)

    def variant(self):
        from hypothesis import strategies as st

        return self._cached("variant", lambda: st.sampled_from(range(len(self.variants))))

    def batches(self, min_size: int = 1, max_size: int = 3, shapes=("plain", "chat")):
        """(variant, items, shape): a group of completions sharing one row, as GRPO batches them."""

        def build():
            from hypothesis import strategies as st

            shape_st = st.sampled_from(shapes)

            @st.composite
            def batches(draw):
                vi = draw(self.variant())
                columns = draw(self.row(vi))
                prompt = draw(self.prompts())
                lists = self._cached(("lists", vi, min_size, max_size),
                                     lambda: st.lists(self.choices(vi), min_size=min_size, max_size=max_size))
                items = [self.item(vi, choice, columns, prompt) for choice in draw(lists)]
                return vi, items, draw(shape_st)

            return batches()

        return self._cached(("batches", min_size, max_size, shapes), build)

    def per_variant(self, key: str, parts: Callable[[int], tuple]):
        """(variant, *drawn parts) where ``parts(vi)`` gives the strategies to draw for that variant."""

        def build():
            from hypothesis import strategies as st

            @st.composite
            def drawn(draw):
                vi = draw(self.variant())
                return (vi, *(draw(strategy) for strategy in self._cached((key, vi), lambda: parts(vi))))

            return drawn()

        return self._cached(key, build)

    def drawn(self, strategy, n: int, deadline: float = math.inf) -> list:
        """Up to ``n`` examples drawn from ``strategy`` with the run's seed, without shrinking (for the audit);
        fewer if ``deadline`` passes first (at least one)."""
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings
        from hypothesis import seed as seed_decorator

        drawn: list = []

        def collect(example):
            if drawn and time.monotonic() > deadline:
                raise OutOfTime()
            drawn.append(example)

        run = seed_decorator(self.seed)(
            settings(max_examples=max(1, n), database=None, deadline=None, phases=[Phase.generate],
                     suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)(given(strategy)(collect))
        )
        try:
            run()
        except OutOfTime:
            pass
        return drawn

    def prompted_rows(self, vi: int):
        """Strategy of (columns, prompt text): real rows with their prompts, rows from the reward's column_strategy
        (its optional ``prompt`` key is the prompt), or drawn columns (numbers or text that shows) with no prompt."""
        from hypothesis import strategies as st

        variant = self.variants[vi]
        if self.rows:
            return st.sampled_from(self.rows).map(lambda row: (columns_of(variant, row), prompt_of(row)))
        if self.spec.checks.column_strategy is not None:
            return self.spec.checks.column_strategy(variant.params).map(lambda row: (columns_of(variant, row), prompt_of(row)))
        # Drawn golds are numbers or text that shows: a blank gold would make the empty completion the right one.
        value = st.one_of(st.integers(-999, 999).map(str), texts(20).filter(lambda text: text.strip()))
        return st.fixed_dictionaries({source: value for source in set(variant.columns.values())}).map(
            lambda columns: (columns, ""))
