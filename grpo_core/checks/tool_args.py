"""What the environment checks give tools: a row's prompt and gold answer, the values taken from the prompt, junk
arguments, hostile arguments of every JSON type and size, and the hypothesis strategies that draw calls.

Hypothesis is imported inside the functions that build strategies, so ``grpo-run --help`` never loads it.
"""

from __future__ import annotations

import inspect
import math
from typing import TYPE_CHECKING, Any

from grpo_core.answers.numbers import find_numbers, parse_plain_number, same_number
from grpo_core.checks.texts import HOSTILE_TEXTS, texts

if TYPE_CHECKING:
    from hypothesis import strategies as st

Call = tuple[str, dict]


def prompt_text(row: dict) -> str:
    """The row's prompt as one text: a string as it is, a conversation's message contents one a line."""
    prompt = row.get("prompt")
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        return "\n".join(str(m.get("content", "")) if isinstance(m, dict) else str(m) for m in prompt)
    return "" if prompt is None else str(prompt)


def gold_column(row: dict, columns: tuple[str, ...]) -> str | None:
    """The column that holds the row's gold answer: ``answer``, else the first of ``columns`` the row has."""
    if "answer" in row:
        return "answer"
    return next((column for column in columns if column in row), None)


def holds(output: Any, gold: Any) -> bool:
    """Whether ``output`` holds the gold answer: its text inside the output's text, or, for a gold answer that is
    a plain number, a number written in the output that equals it exactly (as rationals: ``0.5`` holds ``1/2``).
    A gold answer that is a list of texts (a code task's tests) is held when any one of them is."""
    if gold is None or output is None:
        return False
    if isinstance(gold, (list, tuple)) and any(isinstance(item, str) and item.strip() and holds(output, item)
                                               for item in gold):
        return True
    text, wanted = str(output), str(gold).strip()
    if not wanted:
        return False
    if wanted in text:
        return True
    number = parse_plain_number(wanted, units=False)
    if number is None:
        return False
    return any(found.number is not None and same_number(number, found.number) for found in find_numbers(text))


def other_gold(gold: Any, rows: list[dict], column: str) -> Any:
    """A gold answer unlike ``gold`` (neither holds the other), of the same type where it can be: another row's
    answer, else a made-up one. The same call on a row whose answer is this one shows whether a tool's output
    follows the hidden answer."""
    candidates = [row.get(column) for row in rows] + [31337, 2718281, "zebra-quartz"]
    for candidate in candidates:
        if candidate is None or holds(candidate, gold) or holds(gold, candidate):
            continue
        if isinstance(gold, int) and not isinstance(gold, bool):
            if isinstance(candidate, int):
                return candidate
            continue
        return candidate if not isinstance(gold, str) else str(candidate)
    return "zebra-quartz"


def tool_parameters(method) -> list[str]:
    """The names of a tool's parameters, as TRL lists them (``self``, ``*args`` and ``**kwargs`` left out)."""
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def prompt_values(row: dict) -> list[Any]:
    """Values the model could take from the prompt: its numbers (as text and as numbers) and its words."""
    text = prompt_text(row)
    values: list[Any] = []
    for found in find_numbers(text):
        written = text[found.start:found.end]
        values.append(written)
        try:
            values.append(int(written))
        except ValueError:
            try:
                values.append(float(written))
            except ValueError:
                pass
    values += [word.strip("?.,!:;") for word in text.split()[:40]]
    return list(dict.fromkeys(v for v in values if v != ""))


def worked_calls(tools: dict[str, list[str]], row: dict) -> list[Call]:
    """Each tool once, its parameters given the prompt's numbers in the order written: the episode a model that
    does the task plausibly makes (for arithmetic, it is the right one); empty when the prompt has no number."""
    text = prompt_text(row)
    written = [text[found.start:found.end] for found in find_numbers(text)]
    if not written:
        return []
    return [(tool, {p: written[k % len(written)] for k, p in enumerate(params)}) for tool, params in sorted(tools.items())
            if params]


def junk_episodes(tools: dict[str, list[str]], row: dict, turns: int) -> list[tuple[str, list[Call]]]:
    """``(label, calls)`` for episodes that do no work: no call; each tool once with empty strings, with the prompt's
    text, and with each hostile text; each tool ``turns`` times in a row with empty strings and with the prompt."""
    prompt = prompt_text(row)
    episodes: list[tuple[str, list[Call]]] = [("no tool call", [])]
    for tool, params in tools.items():
        filled = lambda value: (tool, {p: value for p in params})  # noqa: E731
        episodes += [(f"{tool} with empty strings", [filled("")]), (f"{tool} with the prompt's text", [filled(prompt)])]
        episodes += [(f"{tool} with hostile text ({label})", [filled(text)]) for label, text in HOSTILE_TEXTS]
        episodes += [(f"{tool} {turns} times with empty strings", [filled("")] * turns),
                     (f"{tool} {turns} times with the prompt's text", [filled(prompt)] * turns)]
    return episodes


def plain_values(row: dict) -> st.SearchStrategy[Any]:
    """Arguments a model could plausibly write: values from the prompt, numbers (as numbers and as text), text."""
    from hypothesis import strategies as st

    numbers = st.one_of(st.integers(-10**6, 10**6), st.fractions(max_denominator=100).map(str),
                        st.floats(-1e6, 1e6, allow_nan=False).map(lambda f: round(f, 3)))
    kinds = [numbers, numbers.map(str), texts(20)]
    taken = prompt_values(row)
    numeric = [v for v in taken if isinstance(v, (int, float)) or parse_plain_number(str(v), units=False)]
    if numeric:  # mostly the prompt's own numbers: a right episode uses them, and a leak hides among them
        kinds = [st.sampled_from(numeric)] * 4 + kinds
    if taken:
        kinds.append(st.sampled_from(taken))
    return st.one_of(*kinds)


def call_strategy(tools: dict[str, list[str]], values) -> st.SearchStrategy[Call]:
    """One call: a tool, with every parameter drawn from ``values``."""
    from hypothesis import strategies as st

    return st.sampled_from(sorted(tools)).flatmap(
        lambda tool: st.fixed_dictionaries({p: values for p in tools[tool]}).map(lambda args: (tool, args)))


HUGE = (10**400, -(2**63), 2**64, 1e308, -1e-320, "x" * 1_000_000, "9" * 100_000, [0] * 100_000)


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def hostile_values() -> st.SearchStrategy[Any]:
    """An argument of any JSON type and size: None, booleans, huge integers, floats with nan and inf, hostile and
    huge text, nested lists and objects."""
    from hypothesis import strategies as st

    leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10),
                       st.sampled_from([math.nan, math.inf, -math.inf, 0, -1, "", " "]))
    nested = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                                            max_size=4), max_leaves=12)
    deep = st.just(_nested(500))
    return st.one_of(st.sampled_from(HUGE), st.sampled_from([text for _, text in HOSTILE_TEXTS]), leaves, nested, deep)


def hostile_calls(tools: dict[str, list[str]]) -> st.SearchStrategy[Call]:
    """A call with hostile arguments: every parameter given, some missing, or an unknown one added."""
    from hypothesis import strategies as st

    values = hostile_values()

    def arguments(tool: str):
        params = tools[tool]
        full = st.fixed_dictionaries({p: values for p in params})
        missing = st.lists(st.sampled_from(params), unique=True).flatmap(
            lambda kept: st.fixed_dictionaries({p: values for p in kept})) if params else st.just({})
        unknown = full.flatmap(lambda given: values.map(lambda value: {**given, "unknown_argument": value}))
        return st.one_of(full, missing, unknown).map(lambda args: (tool, args))

    return st.sampled_from(sorted(tools)).flatmap(arguments)
