"""The ``code-tasks`` dataset: generated function-writing tasks, each with a reference solution, a solution with
a bug, and assert tests computed from the reference. Offline and seeded: the same arguments give the same rows."""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass

SPLITS = ("train", "test")
SYSTEM_PROMPT = ("You are a careful Python programmer. Answer with the complete function in one ```python code "
                 "block; use only the standard library and do not read input or print.")


TESTS = 10  # scored tests per task
DRAWS = 500  # inputs drawn at most to find a task's tests
SAME = 2  # the most tests of a task with one expected value, or whose answer is their first argument


@dataclass(frozen=True)
class Task:
    """A generated task. ``example`` is the argument tuple the prompt shows and is never among the tests:
    each test is one of ``cases``, a tuple of argument tuples called together (one call, or a group of calls
    whose answers differ, so that no constant answer passes it)."""

    name: str
    signature: str
    description: str
    solution: str
    buggy: str  # the same solution with a bug that at least one test catches
    example: tuple
    cases: tuple

    @property
    def inputs(self) -> tuple:
        """Every argument tuple the tests call the function with."""
        return tuple(args for case in self.cases for args in case)

    def function(self, source: str | None = None):
        namespace: dict = {}
        exec(source or self.solution, namespace)  # our own generated code, never a model's
        return namespace[self.name]

    def outputs(self, source: str | None = None) -> list:
        """What each test compares for the function in ``source`` (the reference by default): its value for a
        one-call case, the list of its values for a group."""
        function = self.function(source)

        def call(args):
            try:
                return function(*args)
            except Exception as error:
                return error

        return [call(case[0]) if len(case) == 1 else [call(args) for args in case] for case in self.cases]

    def tests(self) -> list[str]:
        calls = [[f"{self.name}({', '.join(map(repr, args))})" for args in case] for case in self.cases]
        return [f"assert {call[0] if len(call) == 1 else '[' + ', '.join(call) + ']'} == {out!r}"
                for call, out in zip(calls, self.outputs())]

    def prompt_text(self) -> str:
        out = self.function()(*self.example)
        return (f"Write a Python function `{self.signature}` that {self.description}\n\n"
                f"For example, `{self.name}({', '.join(map(repr, self.example))})` returns `{out!r}`.")


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return False


def _task(name, signature, description, solution, buggy, example, first, draw) -> Task:
    """A task whose tests are the argument tuples of ``first`` (the inputs that catch the bug) and then ones
    ``draw()`` makes, skipping the example, repeats, and any input that would give more than SAME tests one expected
    value or more than SAME tests whose answer is their first argument."""
    function = Task(name, signature, description, solution, buggy, example, ()).function()
    chosen, outs, echoes = [], [], 0
    for args in itertools.chain(first, (draw() for _ in range(DRAWS))):
        if len(chosen) == TESTS:
            break
        if _equal(args, example) or any(_equal(args, c) for c in chosen):
            continue
        out = function(*args)
        echo = _equal(out, args[0])
        if sum(_equal(out, o) for o in outs) >= SAME or (echo and echoes >= SAME):
            continue
        chosen.append(args)
        outs.append(out)
        echoes += echo
    return Task(name, signature, description, solution, buggy, example, tuple((args,) for args in chosen))


def _words(rng, n):
    pool = ["apple", "sky", "river", "stone", "level", "moon", "tree", "radar", "cloud", "fire", "sun", "noon"]
    return " ".join(rng.choice(pool) for _ in range(n))


def _mixed_case(rng, text):
    return "".join(c.upper() if rng.random() < 0.3 else c for c in text)


def _multiples(rng):
    a, b = rng.sample([2, 3, 5, 7, 11], 2)
    return _task(
        "sum_multiples", "sum_multiples(n)", f"returns the sum of all positive integers below n that are multiples of "
        f"{a} or {b}.",
        f"def sum_multiples(n):\n    return sum(k for k in range(1, n) if k % {a} == 0 or k % {b} == 0)\n",
        f"def sum_multiples(n):\n    return sum(k for k in range(1, n + 1) if k % {a} == 0 or k % {b} == 0)\n",
        (rng.randint(10, 30),), [(a * b,), (1,)], lambda: (rng.randrange(2, 300),))


def _vowels(rng):
    def text():
        if rng.random() < 0.2:
            return "".join(rng.choice("bcdfghklmnprstxyz") for _ in range(rng.randint(0, 5)))
        return _mixed_case(rng, _words(rng, rng.randint(1, 6)))

    return _task(
        "count_vowels", "count_vowels(text)", "returns how many vowels (a, e, i, o, u, in either case) text holds.",
        "def count_vowels(text):\n    return sum(1 for c in text.lower() if c in 'aeiou')\n",
        "def count_vowels(text):\n    return sum(1 for c in text if c in 'aeiou')\n",
        (_words(rng, 3),), [(rng.choice(["Umbrella", "AEIOU aeiou", "Orange Apple"]),)],
        lambda: (text(),))


def _reverse_words(rng):
    return _task(
        "reverse_words", "reverse_words(sentence)", "returns the words of sentence (separated by single spaces) in "
        "reverse order, joined by single spaces.",
        "def reverse_words(sentence):\n    return ' '.join(reversed(sentence.split(' ')))\n",
        "def reverse_words(sentence):\n    return sentence[::-1]\n",
        (_words(rng, 3),), [(_words(rng, 4),)], lambda: (_words(rng, rng.randint(1, 6)),))


def _palindromes(rng):
    """Tests of groups of three texts, palindromes and near-misses mixed, so no constant answer passes one."""
    letters = "abcdeilmnorstuv"

    def core():
        half = "".join(rng.choice(letters) for _ in range(rng.randint(1, 4)))
        return half + rng.choice(["", rng.choice(letters)]) + half[::-1]

    def dressed(text):  # case and spaces, which the function must ignore
        return "".join(c + (" " if rng.random() < 0.15 else "") for c in _mixed_case(rng, text)).strip()

    def miss():  # a near-miss (one letter of a palindrome changed) or a few words, never a palindrome
        while True:
            if rng.random() < 0.3:
                text = _words(rng, rng.randint(1, 3))
            else:
                text = core()
                i = rng.choice([i for i in range(len(text)) if 2 * i + 1 != len(text)])
                text = dressed(text[:i] + rng.choice(letters.replace(text[i], "")) + text[i + 1:])
            plain = text.replace(" ", "").lower()
            if plain != plain[::-1]:
                return text

    used = set()

    def fresh(make):
        while True:
            text = make()
            if text not in used:
                used.add(text)
                return text

    def capitalised():  # a palindrome that a case-sensitive comparison gets wrong
        text = core()
        return text[0].upper() + text[1:]

    example = (fresh(lambda: dressed(core())),)
    cases = []
    for index in range(TESTS):
        kinds = [True, False, rng.random() < 0.5]
        rng.shuffle(kinds)
        texts = [fresh(capitalised if index == 0 and kinds.index(True) == i else lambda: dressed(core()))
                 if kind else fresh(miss) for i, kind in enumerate(kinds)]
        cases.append(tuple((text,) for text in texts))
    return Task(
        "is_palindrome", "is_palindrome(text)", "returns True when text reads the same backwards, ignoring case "
        "and spaces, else False.",
        "def is_palindrome(text):\n    t = text.replace(' ', '').lower()\n    return t == t[::-1]\n",
        "def is_palindrome(text):\n    return text == text[::-1]\n",
        example, tuple(cases))


def _fizz(rng):
    a, b = rng.sample([2, 3, 4, 5, 7], 2)
    w1, w2 = rng.sample(["Fizz", "Buzz", "Bang", "Pop", "Zap"], 2)
    return _task(
        "fizz_word", "fizz_word(n)", f"returns '{w1}{w2}' when n is divisible by both {a} and {b}, '{w1}' when only by "
        f"{a}, '{w2}' when only by {b}, and otherwise n as a string.",
        f"def fizz_word(n):\n    if n % {a} == 0 and n % {b} == 0:\n        return '{w1}{w2}'\n    if n % {a} == 0:\n"
        f"        return '{w1}'\n    if n % {b} == 0:\n        return '{w2}'\n    return str(n)\n",
        f"def fizz_word(n):\n    if n % {a} == 0:\n        return '{w1}'\n    if n % {b} == 0:\n        return '{w2}'\n"
        f"    return str(n)\n",
        (rng.randint(1, 100),), [(a * b,), (a * b * 2,)], lambda: (rng.randrange(1, 200),))


def _running_max(rng):
    def numbers(low=-20, high=20):
        return [rng.randint(low, high) for _ in range(rng.randint(0, 8))]

    return _task(
        "running_max", "running_max(numbers)", "returns a list whose i-th item is the largest of numbers[0..i].",
        "def running_max(numbers):\n    out = []\n    for x in numbers:\n        out.append(x if not out else max(out[-1], x))\n"
        "    return out\n",
        "def running_max(numbers):\n    out = [0]\n    for x in numbers:\n        out.append(max(out[-1], x))\n    return out[1:]\n",
        ([rng.randint(-9, 9) for _ in range(5)],), [([rng.randint(-20, -1) for _ in range(3)],)],
        lambda: (numbers(),))


def _digit_sum(rng):
    def number():
        size = 10 ** rng.randint(1, 8)
        return rng.randint(-size, size)

    return _task(
        "digit_sum", "digit_sum(n)", "returns the sum of the decimal digits of the integer n (of its absolute value "
        "when n is negative).",
        "def digit_sum(n):\n    return sum(int(d) for d in str(abs(n)))\n",
        "def digit_sum(n):\n    return sum(int(d) for d in str(n) if d.isdigit()) if n >= 0 else -1\n",
        (rng.randint(100, 9999),), [(-rng.randint(10, 999),)],
        lambda: (number(),))


def _run_length(rng):
    def text(letters="ab"):
        return "".join(rng.choice(letters) * rng.randint(1, 4) for _ in range(rng.randint(0, 5)))

    return _task(
        "run_length", "run_length(text)", "returns the run-length encoding of text: each run of one repeated "
        "character written as the character followed by the run's length, e.g. 'aaab' gives 'a3b1'.",
        "def run_length(text):\n    out = []\n    i = 0\n    while i < len(text):\n        j = i\n"
        "        while j < len(text) and text[j] == text[i]:\n            j += 1\n        out.append(text[i] + str(j - i))\n"
        "        i = j\n    return ''.join(out)\n",
        "def run_length(text):\n    return ''.join(c + str(text.count(c)) for c in dict.fromkeys(text))\n",
        (text(),), [("ab" * rng.randint(2, 3),)], lambda: (text(rng.choice(["ab", "xyz", "abc"])),))


def _second_largest(rng):
    def numbers():
        values = range(-50, 50) if rng.random() < 0.5 else range(0, 5)
        return [rng.choice(values) for _ in range(rng.randint(1, 8))]

    top = rng.randint(-20, 20)
    return _task(
        "second_largest", "second_largest(numbers)", "returns the second largest distinct value in numbers, or None "
        "when there are fewer than two distinct values.",
        "def second_largest(numbers):\n    values = sorted(set(numbers))\n    return values[-2] if len(values) > 1 else None\n",
        "def second_largest(numbers):\n    values = sorted(numbers)\n    return values[-2] if len(values) > 1 else None\n",
        (rng.sample(range(-50, 50), 5),), [([top, rng.randint(-50, top - 1), top],)], lambda: (numbers(),))


def _fibonacci(rng):
    a, b = rng.randint(0, 3), rng.randint(1, 4)
    return _task(
        "sequence_term", "sequence_term(n)", f"returns term n (counting from 0) of the sequence that starts {a}, {b} "
        "and in which every later term is the sum of the two before it.",
        f"def sequence_term(n):\n    x, y = {a}, {b}\n    for _ in range(n):\n        x, y = y, x + y\n    return x\n",
        f"def sequence_term(n):\n    x, y = {a}, {b}\n    for _ in range(n - 1):\n        x, y = y, x + y\n    return x\n",
        (rng.randint(3, 10),), [(rng.randint(11, 25),)], lambda: (rng.randrange(0, 40),))


FAMILIES = (_multiples, _vowels, _reverse_words, _palindromes, _fizz, _running_max, _digit_sum, _run_length,
            _second_largest, _fibonacci)


def make_task(rng: random.Random, family: int | None = None) -> Task:
    """One task from the family ``family`` (by index; drawn when None)."""
    make = FAMILIES[rng.randrange(len(FAMILIES)) if family is None else family % len(FAMILIES)]
    return make(rng)


def messages(system_prompt: str | None, text: str) -> list[dict]:
    return ([{"role": "system", "content": system_prompt}] if system_prompt else []) + [{"role": "user", "content": text}]


def load_code_tasks(split="train", size=500, seed=0, system_prompt=SYSTEM_PROMPT):
    """Generated function-writing tasks: ``prompt`` (chat messages), ``tests`` (assert statements),
    ``solution`` (a reference program) and ``entry_point`` (the function's name)."""
    from datasets import Dataset
    from grpo_core import UsageError

    if split not in SPLITS:
        raise UsageError(f"code-tasks split must be one of: {', '.join(SPLITS)}; got {split!r}")
    if size is None or size < 1:
        raise UsageError(f"code-tasks size must be 1 or more, got {size!r}")
    rng = random.Random(f"code-tasks:{split}:{seed}")
    rows = []
    for _ in range(size):
        task = make_task(rng)
        tests = task.tests()
        remember_solution(tests, task)  # so the preflight's gold check has a reference for these rows
        rows.append({"prompt": messages(system_prompt, task.prompt_text()), "tests": tests,
                     "solution": task.solution, "entry_point": task.name})
    return Dataset.from_list(rows)


_SOLUTIONS: dict[str, tuple[str, str]] = {}  # the tests' JSON -> (function name, reference solution)
_REMEMBERED = 5000  # the most generated tasks whose solutions are kept for gold_example


def remember_solution(tests: list[str], task) -> None:
    """Keep a generated task's reference solution, found again by its tests (the gold completion)."""
    if len(_SOLUTIONS) < _REMEMBERED:
        _SOLUTIONS[json.dumps(list(tests))] = (task.name, task.solution)


def known_solution(tests) -> tuple[str, str] | None:
    """``(function name, reference solution)`` of a generated task with these tests, or None."""
    return _SOLUTIONS.get(json.dumps(list(tests))) if isinstance(tests, (list, tuple)) else None
