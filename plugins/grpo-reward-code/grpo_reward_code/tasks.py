"""The ``code-tasks`` dataset: generated function-writing tasks, each with a reference solution, a solution with
a bug, and assert tests computed from the reference. Offline and seeded: the same arguments give the same rows."""

from __future__ import annotations

import random
from dataclasses import dataclass

SPLITS = ("train", "test")
SYSTEM_PROMPT = ("You are a careful Python programmer. Answer with the complete function in one ```python code "
                 "block; use only the standard library and do not read input or print.")


@dataclass(frozen=True)
class Task:
    name: str
    signature: str
    description: str
    solution: str
    buggy: str  # the same solution with a bug that at least one test catches
    inputs: tuple  # argument tuples

    def outputs(self, source: str | None = None) -> list:
        """What the function in ``source`` (the reference by default) returns for each input."""
        namespace: dict = {}
        exec(source or self.solution, namespace)  # our own generated code, never a model's
        function = namespace[self.name]
        results = []
        for args in self.inputs:
            try:
                results.append(function(*args))
            except Exception as error:
                results.append(error)
        return results

    def tests(self) -> list[str]:
        return [f"assert {self.name}({', '.join(map(repr, args))}) == {out!r}"
                for args, out in zip(self.inputs, self.outputs())]

    def prompt_text(self) -> str:
        args, out = self.inputs[0], self.outputs()[0]
        return (f"Write a Python function `{self.signature}` that {self.description}\n\n"
                f"For example, `{self.name}({', '.join(map(repr, args))})` returns `{out!r}`.")


def _words(rng, n):
    pool = ["apple", "sky", "river", "stone", "level", "moon", "tree", "radar", "cloud", "fire", "sun", "noon"]
    return " ".join(rng.choice(pool) for _ in range(n))


def _multiples(rng):
    a, b = rng.sample([2, 3, 5, 7, 11], 2)
    return Task(
        "sum_multiples", "sum_multiples(n)", f"returns the sum of all positive integers below n that are multiples of "
        f"{a} or {b}.",
        f"def sum_multiples(n):\n    return sum(k for k in range(1, n) if k % {a} == 0 or k % {b} == 0)\n",
        f"def sum_multiples(n):\n    return sum(k for k in range(1, n + 1) if k % {a} == 0 or k % {b} == 0)\n",
        tuple((n,) for n in [10, 1, a * b, rng.randint(20, 60), rng.randint(61, 200), b + 1]))


def _vowels(rng):
    return Task(
        "count_vowels", "count_vowels(text)", "returns how many vowels (a, e, i, o, u, in either case) text holds.",
        "def count_vowels(text):\n    return sum(1 for c in text.lower() if c in 'aeiou')\n",
        "def count_vowels(text):\n    return sum(1 for c in text if c in 'aeiou')\n",
        tuple((t,) for t in ["", "Umbrella", _words(rng, 3), _words(rng, 5).upper(), "xyz", "AEIOU aeiou"]))


def _reverse_words(rng):
    return Task(
        "reverse_words", "reverse_words(sentence)", "returns the words of sentence (separated by single spaces) in "
        "reverse order, joined by single spaces.",
        "def reverse_words(sentence):\n    return ' '.join(reversed(sentence.split(' ')))\n",
        "def reverse_words(sentence):\n    return sentence[::-1]\n",
        tuple((s,) for s in [_words(rng, 2), _words(rng, 4), "single", _words(rng, 3), "a b c"]))


def _palindrome(rng):
    return Task(
        "is_palindrome", "is_palindrome(text)", "returns True when text reads the same backwards, ignoring case "
        "and spaces, else False.",
        "def is_palindrome(text):\n    t = text.replace(' ', '').lower()\n    return t == t[::-1]\n",
        "def is_palindrome(text):\n    return text == text[::-1]\n",
        tuple((s,) for s in ["Radar", "never odd or even", rng.choice(["moon", "stone", "river"]), "", "ab", "Noon"]))


def _fizz(rng):
    a, b = rng.sample([2, 3, 4, 5, 7], 2)
    w1, w2 = rng.sample(["Fizz", "Buzz", "Bang", "Pop", "Zap"], 2)
    return Task(
        "fizz_word", "fizz_word(n)", f"returns '{w1}{w2}' when n is divisible by both {a} and {b}, '{w1}' when only by "
        f"{a}, '{w2}' when only by {b}, and otherwise n as a string.",
        f"def fizz_word(n):\n    if n % {a} == 0 and n % {b} == 0:\n        return '{w1}{w2}'\n    if n % {a} == 0:\n"
        f"        return '{w1}'\n    if n % {b} == 0:\n        return '{w2}'\n    return str(n)\n",
        f"def fizz_word(n):\n    if n % {a} == 0:\n        return '{w1}'\n    if n % {b} == 0:\n        return '{w2}'\n"
        f"    return str(n)\n",
        tuple((n,) for n in [a, b, a * b, 1, a * b * 2, rng.randint(1, 100)]))


def _running_max(rng):
    lists = [[rng.randint(-20, 20) for _ in range(rng.randint(1, 7))] for _ in range(4)]
    return Task(
        "running_max", "running_max(numbers)", "returns a list whose i-th item is the largest of numbers[0..i].",
        "def running_max(numbers):\n    out = []\n    for x in numbers:\n        out.append(x if not out else max(out[-1], x))\n"
        "    return out\n",
        "def running_max(numbers):\n    out = [0]\n    for x in numbers:\n        out.append(max(out[-1], x))\n    return out[1:]\n",
        tuple((xs,) for xs in [*lists, [-3, -5, -1], []]))


def _digit_sum(rng):
    return Task(
        "digit_sum", "digit_sum(n)", "returns the sum of the decimal digits of the integer n (of its absolute value "
        "when n is negative).",
        "def digit_sum(n):\n    return sum(int(d) for d in str(abs(n)))\n",
        "def digit_sum(n):\n    return sum(int(d) for d in str(n) if d.isdigit()) if n >= 0 else -1\n",
        tuple((n,) for n in [0, 7, rng.randint(10, 99999), -rng.randint(10, 999), 1000001, -5]))


def _run_length(rng):
    text = "".join(rng.choice("ab") * rng.randint(1, 4) for _ in range(4))
    return Task(
        "run_length", "run_length(text)", "returns the run-length encoding of text: each run of one repeated "
        "character written as the character followed by the run's length, e.g. 'aaab' gives 'a3b1'.",
        "def run_length(text):\n    out = []\n    i = 0\n    while i < len(text):\n        j = i\n"
        "        while j < len(text) and text[j] == text[i]:\n            j += 1\n        out.append(text[i] + str(j - i))\n"
        "        i = j\n    return ''.join(out)\n",
        "def run_length(text):\n    return ''.join(c + str(text.count(c)) for c in dict.fromkeys(text))\n",
        tuple((t,) for t in [text, "aaab", "", "abab", "zzzz"]))


def _second_largest(rng):
    lists = [rng.sample(range(-50, 50), rng.randint(2, 8)) for _ in range(3)]
    return Task(
        "second_largest", "second_largest(numbers)", "returns the second largest distinct value in numbers, or None "
        "when there are fewer than two distinct values.",
        "def second_largest(numbers):\n    values = sorted(set(numbers))\n    return values[-2] if len(values) > 1 else None\n",
        "def second_largest(numbers):\n    values = sorted(numbers)\n    return values[-2] if len(values) > 1 else None\n",
        tuple((xs,) for xs in [*lists, [5, 5, 3], [4], [2, 2]]))


def _fibonacci(rng):
    a, b = rng.randint(0, 3), rng.randint(1, 4)
    return Task(
        "sequence_term", "sequence_term(n)", f"returns term n (counting from 0) of the sequence that starts {a}, {b} "
        "and in which every later term is the sum of the two before it.",
        f"def sequence_term(n):\n    x, y = {a}, {b}\n    for _ in range(n):\n        x, y = y, x + y\n    return x\n",
        f"def sequence_term(n):\n    x, y = {a}, {b}\n    for _ in range(n - 1):\n        x, y = y, x + y\n    return x\n",
        tuple((n,) for n in [0, 1, 2, rng.randint(3, 10), rng.randint(11, 25)]))


FAMILIES = (_multiples, _vowels, _reverse_words, _palindrome, _fizz, _running_max, _digit_sum, _run_length,
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
    from grpo_reward_code.checks import remember_solution

    rows = []
    for _ in range(size):
        task = make_task(rng)
        tests = task.tests()
        remember_solution(tests, task)  # so the preflight's gold check has a reference for these rows
        rows.append({"prompt": messages(system_prompt, task.prompt_text()), "tests": tests,
                     "solution": task.solution, "entry_point": task.name})
    return Dataset.from_list(rows)
