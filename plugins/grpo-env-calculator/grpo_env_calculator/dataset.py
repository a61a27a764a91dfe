"""Dataset ``products``: generated multiplication problems of multi-digit numbers (offline, seeded), the kind a
small model gets wrong in its head and right with the calculator's ``multiply``.

Each row has a chat ``prompt`` (a system message naming the tools and the answer tag, ``worked_examples`` worked
episodes, then the question), ``answer`` (the exact product, as text) and ``operands`` (the two numbers, which
``gold_episode`` multiplies).

A worked example is one episode as the model should run it: the question, an assistant turn that says what it does
and calls ``multiply``, the tool's answer, and the final answer in the tag. Measured on SmolLM2-135M-Instruct
(benchmarks/tool_run_sweep.md), none or one of them leaves it calling no tool at all, greedy or sampled; two make
it call ``multiply`` with the question's numbers on nearly every problem.
"""

from __future__ import annotations

import hashlib
import random
import re

from grpo_core import UsageError

SYSTEM_PROMPT = ("You have a calculator: its tools add, subtract, multiply and divide compute exactly. "
                 "Use them, then put the final answer inside <answer></answer>.")
SPLITS = ("train", "test")
MAX_DIGITS = 18  # an operand stays within a 64-bit integer column
_DIGITS = re.compile(r"(\d+)x(\d+)")
# The worked examples' problems, never asked as a row's question (any digits: rows skip them).
EXAMPLE_PAIRS = ((317, 46), (508, 73), (1294, 38), (62, 9071))
WORKED_TEXT = "I multiply with the calculator."
# What a worked example may show: the tool it calls, the question's sign, the turn's words and the result.
WORKED_TOOLS = {
    "multiply": ("×", WORKED_TEXT, lambda a, b: a * b),
    "add": ("+", "I add with the calculator.", lambda a, b: a + b),
    "subtract": ("-", "I subtract with the calculator.", lambda a, b: a - b),
}


def worked_example(a: int, b: int, tool: str = "multiply", words: str | None = None) -> list[dict]:
    """One worked episode: the question, a turn that says ``words`` (unset: the tool's own, "I add with the
    calculator.") and calls ``tool`` (multiply unless told) on its numbers, the tool's answer, and the final answer in
    the tag (messages as TRL's chat templates render a tool call)."""
    sign, text, compute = WORKED_TOOLS[tool]
    text = text if words is None else words
    call = {"type": "function", "function": {"name": tool, "arguments": {"a": str(a), "b": str(b)}}}
    return [{"role": "user", "content": f"What is {a} {sign} {b}?"},
            {"role": "assistant", "content": text, "tool_calls": [call]},
            {"role": "tool", "name": tool, "content": str(compute(a, b))},
            {"role": "assistant", "content": f"<answer>{compute(a, b)}</answer>"}]


def parse_digits(digits: str) -> tuple[int, int]:
    """``"3x2"`` -> (3, 2): the number of digits of the first and of the second operand."""
    found = _DIGITS.fullmatch(str(digits).strip().lower())
    if not found or not all(1 <= int(n) <= MAX_DIGITS for n in found.groups()):
        raise UsageError(f"products digits must be written AxB, the digits of each operand from 1 to {MAX_DIGITS} "
                         f"(e.g. 3x2 for 123 × 45); got {digits!r}")
    return int(found.group(1)), int(found.group(2))


def pair_split(a: int, b: int) -> str:
    """The one split a pair of operands belongs to (one in four goes to test), whichever comes first: no test
    problem is ever trained on, whatever the seeds."""
    low, high = sorted((a, b))
    digest = hashlib.blake2b(f"{low}x{high}".encode(), digest_size=4).digest()
    return "test" if int.from_bytes(digest, "big") % 4 == 0 else "train"


def _count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= len(EXAMPLE_PAIRS):
        raise UsageError(f"products {name} must be a whole number from 0 to {len(EXAMPLE_PAIRS)}; got {value!r}")
    return value


def rows(split: str = "train", size: int = 1000, seed: int = 0, digits: str = "3x2",
         system_prompt: str | None = SYSTEM_PROMPT, worked_examples: int = 0,
         test_worked_examples: int | None = None, worked_tool: str = "multiply",
         worked_words: str | None = None, test_worked_tool: str | None = None) -> list[dict]:
    """The rows as plain dicts, each problem once; the same arguments give the same rows.

    Each split draws from a random stream of its own and keeps only the pairs that belong to it
    (``pair_split``), so train and test share no pair of operands for any seeds. The test split's prompts show
    ``test_worked_examples`` worked episodes when it is given, else ``worked_examples``: held-out prompts with fewer
    of them than training had ask whether the model calls the tool by itself, not whether it copies the examples.
    The worked episodes call ``worked_tool`` on questions of its own sign, or several tools in turn
    (``multiply,add``): with ``add`` they show how to call a tool but not which one a product needs, so a model that
    copies them calls the wrong one until it learns better. Choices separated by ``|`` go to the rows in turn
    (``add|add,subtract``: every other row's worked episodes call add twice, the rest add then subtract).
    ``test_worked_tool``, when given, is the test split's. ``worked_words`` replaces the words of every worked
    turn before its call ("I use the calculator." names no tool, so the question's sign is left to choose it).
    """
    choices = _tool_choices("worked_tool", worked_tool)
    if test_worked_tool is not None:
        test_choices = _tool_choices("test_worked_tool", test_worked_tool)
        choices = test_choices if split == "test" else choices
    if split not in SPLITS:
        raise UsageError(f"products split must be one of: {', '.join(SPLITS)}; got {split!r}")
    first, second = parse_digits(digits)
    shown = _count("worked_examples", worked_examples)
    if test_worked_examples is not None:
        test_shown = _count("test_worked_examples", test_worked_examples)
        shown = test_shown if split == "test" else shown
    examples = [[m for index, (a, b) in enumerate(EXAMPLE_PAIRS[:shown])
                 for m in worked_example(a, b, tools[index % len(tools)], worked_words)] for tools in choices]
    asked = {(min(a, b), max(a, b)) for a, b in EXAMPLE_PAIRS}
    problems = 81 * 10 ** (first + second - 2)  # 9 * 10^(d-1) numbers of d digits, for each operand
    if size is None or not 1 <= size <= problems // 8:
        raise UsageError(f"products size must be between 1 and {max(1, problems // 8)} for digits={digits} (an eighth "
                         f"of its {problems} problems, so the split's problems stay distinct); got {size!r}")
    rng = random.Random(f"products:{split}:{first}x{second}:{seed}")
    seen, result = set(), []
    while len(result) < size:
        a, b = rng.randrange(10 ** (first - 1), 10 ** first), rng.randrange(10 ** (second - 1), 10 ** second)
        if pair_split(a, b) != split or (min(a, b), max(a, b)) in seen | asked:
            continue
        seen.add((min(a, b), max(a, b)))
        chat = [{"role": "system", "content": system_prompt}] if system_prompt else []
        chat += [dict(m) for m in examples[len(result) % len(examples)]]
        chat.append({"role": "user", "content": f"What is {a} × {b}?"})
        result.append({"prompt": chat, "answer": str(a * b), "operands": [a, b]})
    return result


def load(split: str = "train", size: int = 1000, seed: int = 0, digits: str = "3x2",
         system_prompt: str | None = SYSTEM_PROMPT, worked_examples: int = 0, test_worked_examples: int | None = None,
         worked_tool: str = "multiply", worked_words: str | None = None, test_worked_tool: str | None = None):
    """A ``datasets.Dataset`` of ``size`` rows with ``prompt``, ``answer`` and ``operands`` columns."""
    from datasets import Dataset  # heavy: imported only when the dataset is loaded

    return Dataset.from_list(rows(split, size, seed, digits, system_prompt, worked_examples, test_worked_examples,
                                  worked_tool, worked_words, test_worked_tool))


def _tool_choices(name: str, value: str) -> list[list[str]]:
    """``"add|add,subtract"`` -> [["add"], ["add", "subtract"]]: the tools of each choice, in turn."""
    choices = [[tool.strip() for tool in choice.split(",")] for choice in str(value).split("|")]
    if any(tool not in WORKED_TOOLS for tools in choices for tool in tools):
        raise UsageError(f"products {name} takes one or more of {', '.join(WORKED_TOOLS)}, comma-separated, or "
                         f"several such choices separated by | for the rows in turn (add|add,subtract); got {value!r}")
    return choices
