"""The properties of an environment, each run on episodes that start from dataset rows: reset isolation,
determinism, the declared gold episode, do-nothing episodes, no leak of the gold answer, hostile tool arguments,
the reward's bounds and each call's time limit. ``check_environment`` runs them all for ``grpo-run check --env``."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable

from grpo_core.checks.display import clip_repr
from grpo_core.checks.episodes import (DEFAULT_CALL_TIMEOUT_S, Episode, EnvironmentUnderTest, EpisodeFailed, ToolHung,
                                       in_bounds)
from grpo_core.checks.results import FAIL, PASS, SKIP, PropertyResult
from grpo_core.checks.search import Violation, search
from grpo_core.checks.tool_args import (Call, call_strategy, gold_column, holds, hostile_calls, junk_episodes,
                                        other_gold, plain_values, prompt_text, worked_calls)
from grpo_core.plugins.loading import Environment

NO_REWARD = "the environment has no get_reward(), so its episodes earn no reward to check"
NO_GOLD = ("not checked, the environment declares no gold episode; declare gold_episode in its EnvironmentSpec (for a "
           "class named by path, put an EnvironmentSpec beside it in the file and name that: file.py:spec)")
NO_GOLD_SERVED = ("not checked, an OpenEnv server declares no gold episode (the other properties need none; its "
                  "right episodes are checked where the environment's own code declares one)")
DO_NOTHING_ROWS = 3  # rows the fixed do-nothing episodes start from


@dataclass
class Draw:
    """What hypothesis draws with: the seed and the examples per property."""

    seed: int
    max_examples: int

    @property
    def asked(self) -> int:
        """The examples asked for: an environment's check is never shortened to a time budget."""
        return self.max_examples


def flat(**episodes: Episode) -> dict:
    """Several episodes as one counterexample: each key prefixed with the episode's label."""
    out = {}
    for label, episode in episodes.items():
        for key, value in episode.shown().items():
            out[f"{label.replace('_', ' ')}: {key}"] = value
    return out


def guarded(check: Callable) -> Callable:
    """``check`` with a failure of the class itself (reset, get_reward, __init__) turned into a Violation."""
    def run(drawn):
        try:
            check(drawn)
        except EpisodeFailed as error:
            raise Violation(error.message, error.episode.shown()) from None
    return run


def episode_calls(subject: EnvironmentUnderTest, index_strategy, max_calls: int):
    """(row index, calls) where the calls work on that row: its declared gold episode ("gold"), each tool given the
    prompt's numbers in order, or tools called with values mostly from its prompt."""
    from hypothesis import strategies as st

    def calls(index: int):
        choices = [st.just("gold")] if subject.spec.gold_episode is not None else []
        worked = worked_calls(subject.tools, subject.rows[index])
        choices += [st.just(worked)] if worked else []
        return st.tuples(st.just(index), st.one_of(*choices, drawn_calls(subject, index, max_calls)))

    return index_strategy.flatmap(calls)


def drawn_calls(subject: EnvironmentUnderTest, index: int, max_calls: int):
    """Up to ``max_calls`` calls, each to a tool with values mostly from row ``index``'s prompt."""
    from hypothesis import strategies as st

    if not subject.tools:
        return st.just([])
    return st.lists(call_strategy(subject.tools, plain_values(subject.rows[index])), max_size=max_calls)


def resolve(subject: EnvironmentUnderTest, row: dict, calls) -> list[Call]:
    return subject.gold_calls(row) if calls == "gold" else calls


def reset_isolation(subject: EnvironmentUnderTest, draw: Draw) -> PropertyResult:
    """An episode on one instance changes nothing another instance does, and after reset nothing of the episode
    before remains: both give the tool outputs and reward of the same episode on a new instance, and an episode
    with no call gives what it gave before any episode ran."""
    from hypothesis import strategies as st

    rows, name = subject.rows, "reset isolation"
    index = st.integers(0, len(rows) - 1)
    untouched = [subject.run(row, []).fingerprint() for row in rows]  # before any episode ran: nothing to inherit
    cause = "(state kept past reset, or on the class, where every instance shares it)"

    def strategy(first):
        def then(j: int):
            return st.tuples(st.just(first), st.just(j), st.one_of(st.just([]), drawn_calls(subject, j, 2)))

        # the next episode is mostly on the same row: what an episode left behind pays there
        return st.one_of(st.just(first[0]), index).flatmap(then)

    def expected_of(j: int, after_calls: list) -> Episode:
        expected = subject.run(rows[j], after_calls)
        if not after_calls and expected.fingerprint() != untouched[j]:
            raise Violation(f"{name} violated: an episode with no call on a new instance gives what it gave before "
                            f"any episode ran; after other episodes it did not {cause}", expected.shown())
        return expected

    def check(drawn):
        (i, calls), j, after_calls = drawn
        row_a, row_b = rows[i], rows[j]
        calls = resolve(subject, row_a, calls)
        expected = expected_of(j, after_calls)
        instance = subject.fresh(Episode(row_a))
        before = subject.run(row_a, calls, instance=instance)
        after = subject.run(row_b, after_calls, instance=instance)
        if after.fingerprint() != expected.fingerprint():
            raise Violation(f"{name} violated: after reset, an episode gives what the same episode gives on a new "
                            f"instance; this one did not {cause}",
                            flat(episode_before=before, after_reset=after, on_a_new_instance=expected))
        other_side = Episode(dict(row_b))
        instance_b = subject.fresh(other_side)
        subject.start(instance_b, row_b, other_side)
        elsewhere = subject.run(row_a, calls)
        for tool, args in after_calls:
            subject.call(instance_b, other_side, tool, args)
        subject.score(instance_b, other_side)
        expected = expected_of(j, after_calls)
        if other_side.fingerprint() != expected.fingerprint():
            raise Violation(f"{name} violated: two instances share no state; an episode on another instance changed "
                            f"what this one gave {cause}",
                            flat(on_another_instance=elsewhere, this_instance=other_side, on_a_new_instance=expected))

    fixed = [((i, "gold" if subject.spec.gold_episode is not None else worked_calls(subject.tools, rows[i])), i, [])
             for i in range(min(len(rows), DO_NOTHING_ROWS))]
    for count, drawn in enumerate(fixed, 1):
        try:
            guarded(check)(drawn)
        except Violation as found:
            return subject.result(name, FAIL, found.message, found.example, count)
    result = search(name, subject, draw, episode_calls(subject, index, subject.turns).flatmap(strategy),
                    guarded(check), math.inf)
    result.examples += len(fixed)
    return result


def deterministic(subject: EnvironmentUnderTest, draw: Draw) -> PropertyResult:
    """The same row and the same calls give the same tool outputs and reward on two new instances."""
    from hypothesis import strategies as st

    index = st.integers(0, len(subject.rows) - 1)

    def check(drawn):
        i, calls = drawn
        row = subject.rows[i]
        calls = resolve(subject, row, calls)
        first, second = subject.run(row, calls), subject.run(row, calls)
        if first.fingerprint() != second.fingerprint():
            raise Violation("deterministic violated: the same row and calls give the same tool outputs and reward; "
                            "two new instances gave different ones", flat(first=first, second=second))

    return search("deterministic", subject, draw, episode_calls(subject, index, subject.turns), guarded(check),
                  math.inf)


def gold_episode(subject: EnvironmentUnderTest, draw: Draw) -> PropertyResult:
    """The declared gold episode earns the high bound on every row tried."""
    name = "gold episode"
    rows = subject.rows[:draw.max_examples]
    for row in rows:
        episode = subject.run(row, subject.gold_calls(row))
        raised = next((r for r in episode.raised if r), "")
        if raised or not isinstance(episode.reward, (int, float)) or episode.reward < subject.hi - 1e-9:
            detail = f"a tool raised {raised}" if raised else f"it earned {episode.reward!r}"
            return subject.result(name, FAIL, f"{name} violated: the declared gold episode earns the high bound "
                                  f"{subject.hi:g}; {detail}", episode.shown(), len(rows))
    return subject.result(name, PASS, examples=len(rows))


def do_nothing(subject: EnvironmentUnderTest, draw: Draw) -> PropertyResult:
    """Episodes that do no work (no call, junk arguments, one tool called over and over) earn at most the low
    bound."""
    name, count = "do-nothing", 0
    for row in subject.rows[:DO_NOTHING_ROWS]:
        for label, calls in junk_episodes(subject.tools, row, subject.turns):
            episode = subject.run(row, calls)
            count += 1
            if episode.reward is not None and not (isinstance(episode.reward, (int, float))
                                                   and episode.reward <= subject.lo):
                return subject.result(name, FAIL, f"{name} violated: an episode that does no work earns at most the "
                                      f"low bound {subject.lo:g}; this one ({label}) earned {episode.reward!r}",
                                      episode.shown(label), count)
    return subject.result(name, PASS, examples=count)


def hidden_golds(subject: EnvironmentUnderTest, row: dict) -> list[tuple[str, Any]]:
    """``(column, value)`` for what no tool output may hold on ``row``: its gold answer (an ``answer`` column, or the
    first of the environment's columns the row has); for rows with neither, each column the prompt does not show (a
    code task's hidden tests and reference solution, which an environment reading no column must not reach either).
    A value the prompt holds is left out: showing it gives nothing away."""
    column = gold_column(row, subject.spec.columns)
    if column is not None:
        found = [(column, row[column])]
    else:
        found = [(name, value) for name, value in row.items() if name != "prompt" and value is not None
                 and not isinstance(value, bool) and str(value).strip() and value != []]
    shown = prompt_text(row)
    return [(name, value) for name, value in found if value is not None and not holds(shown, value)]


def leak(subject: EnvironmentUnderTest, row: dict, call: Call) -> tuple[str, dict] | None:
    """Why ``call`` leaks what ``row`` hides (``hidden_golds``), with the episodes that show it; None when it does not.

    An output holds the gold answer without leaking it when the declared gold episode makes exactly that call,
    when the arguments themselves hold the answer, or when the output follows from the arguments: the same call
    on the same row with another hidden answer still gives this answer (a calculator multiplying the prompt's
    numbers). It leaks when the output follows the hidden answer, or when a tool with no arguments gives it."""
    golds = hidden_golds(subject, row)
    if not golds:
        return None
    episode = subject.run(row, [call], score=False)
    tool, args = call
    held = [(column, gold) for column, gold in golds if holds(episode.outputs[0], gold)]
    if not held or any(tool == t and _same_args(args, a) for t, a in subject.gold_calls(row) or []):
        return None
    for column, gold in held:
        if any(holds(value, gold) for value in args.values()):
            continue
        what = f"the row's gold answer {clip_repr(gold, 120)}" if column == gold_column(row, subject.spec.columns) \
            else f"the row's hidden '{column}' ({clip_repr(gold, 120)})"
        if not subject.tools.get(tool):
            return f"'{tool}' takes no arguments, yet its output holds {what}", episode.shown()
        changed = {**row, column: other_gold(gold, subject.rows, column)}
        other = subject.run(changed, [call], score=False)
        if holds(other.outputs[0], gold):
            continue
        return (f"the output of {tool} holds {what} and follows the hidden '{column}' column, not the arguments (the "
                "same call on the row with another value there gave another output)",
                flat(episode=episode, same_call_other_answer=other))
    return None


def _same_args(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(str(a[k]) == str(b[k]) for k in a)


def no_leak(subject: EnvironmentUnderTest, draw: Draw) -> PropertyResult:
    """No tool output holds the row's gold answer (or, for rows without one, a column the prompt does not show) for
    arguments drawn (text, numbers, the prompt's values), unless the declared gold episode makes that call or the
    answer follows from the arguments."""
    from hypothesis import strategies as st

    name = "no leak"
    if not any(hidden_golds(subject, row) for row in subject.rows):
        return subject.result(name, SKIP, "the rows have no gold answer (an 'answer' column, or one of the "
                                          "environment's columns), nor any column the prompt does not show, to "
                                          "look for in tool outputs")
    if not subject.tools:
        return subject.result(name, SKIP, "the environment has no tools")
    rows = subject.rows
    strategy = st.integers(0, len(rows) - 1).flatmap(
        lambda i: st.tuples(st.just(i), call_strategy(subject.tools, plain_values(rows[i]))))

    def check(drawn):
        i, call = drawn
        found = leak(subject, rows[i], call)
        if found:
            raise Violation(f"{name} violated: no tool output holds the row's gold answer (or what else the row "
                            f"hides from the prompt) unless the declared gold episode makes that call; {found[0]}",
                            found[1])

    return search(name, subject, draw, strategy, guarded(check), math.inf)


def hostile_arguments(subject: EnvironmentUnderTest, draw: Draw) -> PropertyResult:
    """Arguments of every JSON type and size never raise out of a tool: it answers with a value (an error message)."""
    from hypothesis import strategies as st

    name = "hostile arguments"
    if not subject.tools:
        return subject.result(name, SKIP, "the environment has no tools")
    rows = subject.rows

    def check(drawn):
        i, call = drawn
        episode = subject.run(rows[i], [call])
        if episode.raised[0]:
            raise Violation(f"{name} violated: a tool answers any arguments with a value, never an exception (TRL "
                            f"shows the model the error; grpo-core asks for an error message); {call[0]} raised "
                            f"{episode.raised[0]}", episode.shown())

    fixed = [(tool, {p: value for p in params}) for tool, params in sorted(subject.tools.items())
             for value in (None, True, 10**400, math.nan, math.inf, "", "x" * 1_000_000, [[1, [2]], {"a": None}])]
    for call in fixed:
        try:
            guarded(check)((0, call))
        except Violation as found:
            return subject.result(name, FAIL, found.message, found.example, fixed.index(call) + 1)
    strategy = st.tuples(st.integers(0, len(rows) - 1), hostile_calls(subject.tools))
    result = search(name, subject, draw, strategy, guarded(check), math.inf)
    result.examples += len(fixed)
    return result


def bounds(subject: EnvironmentUnderTest, draw: Draw) -> PropertyResult:
    """Every reward an episode earned in the checks above is a finite number within the bounds, or None."""
    for episode in subject.seen:
        if not in_bounds(episode.reward, subject.lo, subject.hi):
            return subject.result("bounds", FAIL, f"bounds violated: every reward is a finite number inside the "
                                  f"declared bounds [{subject.lo:g}, {subject.hi:g}], or None; this one is "
                                  f"{episode.reward!r}", episode.shown(), len(subject.seen))
    return subject.result("bounds", PASS, examples=len(subject.seen))


# The properties in the order they run: (name, function, needs get_reward).
PROPERTIES: tuple[tuple[str, Callable, bool], ...] = (
    ("reset isolation", reset_isolation, False),
    ("deterministic", deterministic, False),
    ("gold episode", gold_episode, True),
    ("do-nothing", do_nothing, True),
    ("no leak", no_leak, False),
    ("hostile arguments", hostile_arguments, False),
    ("bounds", bounds, True),
)


def check_environment(environment: Environment, rows: list[dict], seed: int, max_examples: int,
                      call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S) -> list[PropertyResult]:
    """Every property of one environment on episodes from ``rows``, then the time limit of its calls."""
    subject = EnvironmentUnderTest(environment, rows, call_timeout_s)
    draw, results = Draw(seed, max(1, max_examples)), []
    for name, function, needs_reward in PROPERTIES:
        started = time.monotonic()
        if subject.hung is not None:
            result = subject.result(name, SKIP, "not run: a call hung (see time)")
        elif needs_reward and not subject.has_reward:
            result = subject.result(name, SKIP, NO_REWARD)
        elif name == "gold episode" and subject.spec.gold_episode is None:
            result = subject.result(name, SKIP, "the environment declares no gold episode",
                                    note=NO_GOLD_SERVED if getattr(subject.spec, "url", "") else NO_GOLD)
        else:
            try:
                result = function(subject, draw)
            except EpisodeFailed as error:
                result = subject.result(name, FAIL, error.message, error.episode.shown())
            except ToolHung as error:
                subject.hung, subject.hung_in = error, name
                result = subject.result(name, SKIP, "interrupted: a call hung (see time)")
        result.seconds = time.monotonic() - started
        results.append(result)
    results.append(time_limit(subject))
    return results


def time_limit(subject: EnvironmentUnderTest) -> PropertyResult:
    if subject.hung is None:
        return subject.result("time", PASS)
    hung = subject.hung
    return subject.result("time", FAIL, f"time violated: each call answers within {subject.timeout:g} s; "
                          f"{hung.what} gave no answer within {subject.timeout:g} s, so the limit fired (the call was "
                          f"abandoned, during '{subject.hung_in}')", hung.episode.shown())
