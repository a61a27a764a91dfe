"""The datasets this plugin registers: ``gsm8k`` (from the hub or a local file) and ``arithmetic`` (generated).

Both return a ``datasets.Dataset`` with a conversational ``prompt`` column (a system message
and the question) and an ``answer`` column holding the gold answer as a string.
"""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path

from grpo_core import UsageError

# Short (every prompt token costs training time on a CPU); the few-shot turns show the exact form
# the math reward reads first (the answer tag), which a 135M-parameter instruct model then copies.
ARITHMETIC_SYSTEM_PROMPT = "Answer with the final number inside <answer></answer>."
GSM8K_SYSTEM_PROMPT = (
    "Solve the problem step by step. Then write the final answer as a number inside "
    "<answer></answer>, for example <answer>42</answer>."
)
DIFFICULTIES = ("easy", "medium", "hard")
SPLITS = ("train", "test")

_FORMATS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".csv": "csv"}
_GROUPED = re.compile(r"(?<=\d),(?=\d{3}\b)")


def messages(system_prompt: str | None, question: str) -> list[dict]:
    """A conversational prompt: the system message (if any) and the question."""
    chat = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return chat + [{"role": "user", "content": question}]


def gsm8k_answer(solution: str) -> str:
    """The final answer of a gsm8k solution: what follows its ``#### `` line, without thousands commas."""
    if not isinstance(solution, str) or "####" not in solution:
        return ""
    tail = solution.rsplit("####", 1)[1].strip()
    final = tail.splitlines()[0].strip() if tail else ""
    return _GROUPED.sub("", final).rstrip(".")


def load_gsm8k(split="train", config="main", size=None, seed=0, shuffle=False, system_prompt=GSM8K_SYSTEM_PROMPT, path=None):
    """openai/gsm8k through ``datasets.load_dataset``, or a local file in the same format (``path``).

    A local file (parquet, jsonl, json or csv) needs the columns ``question`` and ``answer``,
    where ``answer`` is a worked solution ending in a ``#### N`` line, as in gsm8k.
    """
    from datasets import load_dataset

    if path:
        file = Path(path)
        builder = _FORMATS.get(file.suffix.lower())
        if not file.is_file():
            raise UsageError(f"gsm8k file '{path}' does not exist; pass a parquet or jsonl file with question and answer columns")
        if builder is None:
            raise UsageError(f"gsm8k file '{path}' has an unknown extension; use one of: {', '.join(_FORMATS)}")
        dataset = load_dataset(builder, data_files={split: str(file)}, split=split)
        source = f"file '{path}'"
    else:
        dataset = load_dataset("openai/gsm8k", config, split=split)
        source = "openai/gsm8k"
    missing = {"question", "answer"} - set(dataset.column_names)
    if missing:
        raise UsageError(
            f"gsm8k {source} lacks the column(s) {', '.join(sorted(missing))}; it has {', '.join(dataset.column_names)}"
        )
    if shuffle:
        dataset = dataset.shuffle(seed=seed)
    if size is not None:
        dataset = dataset.select(range(min(size, len(dataset))))
    return dataset.map(
        lambda row: {"prompt": messages(system_prompt, row["question"]), "answer": gsm8k_answer(row["answer"])},
        remove_columns=dataset.column_names,
    )


def load_arithmetic(split="train", size=1000, seed=0, difficulty="easy", system_prompt=ARITHMETIC_SYSTEM_PROMPT,
                    few_shot=2, worked=False):
    """Generated arithmetic questions with exact integer answers; the same arguments give the same rows.

    ``few_shot`` worked examples go before each question as earlier chat turns (the user asks,
    the assistant answers ``<answer>N</answer>``): a small model copies a format it has seen
    itself answer far more often than one it was only told about. With ``worked`` the examples
    write the calculation first (``15 + 4 = 19`` on its own line, then ``<answer>19</answer>``);
    SmolLM2-135M-Instruct answers twice as many easy questions right when it copies that form.

    ``easy``: one + or - on numbers up to 20 with a non-negative result. ``medium``: one of + - x /
    on numbers up to 100 (x and / up to 12 x 12, division exact), half of them as word problems.
    ``hard``: two or three steps, as expressions or word problems.
    """
    from datasets import Dataset

    if difficulty not in DIFFICULTIES:
        raise UsageError(f"arithmetic difficulty must be one of: {', '.join(DIFFICULTIES)}; got {difficulty!r}")
    if split not in SPLITS:
        raise UsageError(f"arithmetic split must be one of: {', '.join(SPLITS)}; got {split!r}")
    if size is None or size < 1:
        raise UsageError(f"arithmetic size must be 1 or more, got {size!r}")
    if few_shot is None or few_shot < 0:
        raise UsageError(f"arithmetic few_shot must be 0 or more, got {few_shot!r}")
    make = {"easy": _easy, "medium": _medium, "hard": _hard}[difficulty]
    shots_rng = random.Random(f"arithmetic:shots:{difficulty}")  # fixed examples, apart from the questions
    shots = []
    for _ in range(few_shot):
        question, value, work = make(shots_rng)
        while question_split(question) != "train":  # the examples are in every prompt, so never a test question
            question, value, work = make(shots_rng)
        answer = f"{work}\n<answer>{value}</answer>" if worked else f"<answer>{value}</answer>"
        shots += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    rng = random.Random(f"arithmetic:{split}:{seed}")
    rows = []
    for _ in range(size):
        question, value, _ = make(rng)
        while question_split(question) != split:  # easy questions repeat, so each text belongs to one split
            question, value, _ = make(rng)
        chat = messages(system_prompt, question)
        rows.append({"prompt": chat[:-1] + shots + chat[-1:], "answer": str(value)})
    return Dataset.from_list(rows)


def question_split(question: str) -> str:
    """The one split a question text belongs to (two in five go to test), so no test question is ever trained on."""
    digest = hashlib.blake2b(question.encode(), digest_size=4).digest()
    return "test" if int.from_bytes(digest, "big") % 5 < 2 else "train"


_NAMES = (("Ana", "She"), ("Ben", "He"), ("Chen", "He"), ("Dara", "She"), ("Eli", "He"), ("Fatima", "She"), ("Sam", "He"))
_ITEMS = ("apples", "marbles", "stickers", "books", "pencils", "cookies", "stamps", "shells")


# Each generator returns (question, answer, the worked calculation shown in few-shot examples).
def _easy(rng: random.Random) -> tuple[str, int, str]:
    a, b = rng.randint(1, 20), rng.randint(1, 20)
    if rng.random() < 0.5:
        return f"What is {a} + {b}?", a + b, f"{a} + {b} = {a + b}"
    a, b = max(a, b), min(a, b)
    return f"What is {a} - {b}?", a - b, f"{a} - {b} = {a - b}"


def _one_step(rng: random.Random) -> tuple[str, str, int, int, int]:
    """(operation, symbol, a, b, result) for one of + - x / with an exact, non-negative result."""
    operation = rng.choice("+-*/")
    if operation == "+":
        a, b = rng.randint(1, 100), rng.randint(1, 100)
        return operation, "+", a, b, a + b
    if operation == "-":
        a, b = sorted((rng.randint(1, 100), rng.randint(1, 100)), reverse=True)
        return operation, "-", a, b, a - b
    if operation == "*":
        a, b = rng.randint(2, 12), rng.randint(2, 12)
        return operation, "×", a, b, a * b
    b, quotient = rng.randint(2, 12), rng.randint(1, 12)
    return operation, "÷", b * quotient, b, quotient


def _medium(rng: random.Random) -> tuple[str, int, str]:
    operation, symbol, a, b, result = _one_step(rng)
    work = f"{a} {symbol} {b} = {result}"
    if rng.random() < 0.5:
        return f"What is {a} {symbol} {b}?", result, work
    name, pronoun = rng.choice(_NAMES)
    items = rng.choice(_ITEMS)
    stories = {
        "+": f"{name} has {a} {items}. {pronoun} gets {b} more. How many {items} does {name} have now?",
        "-": f"{name} has {a} {items} and gives {b} of them to a friend. How many {items} does {name} have left?",
        "*": f"{name} buys {a} boxes with {b} {items} in each box. How many {items} does {name} buy?",
        "/": f"{name} shares {a} {items} equally among {b} friends. How many {items} does each friend get?",
    }
    return stories[operation], result, work


def _hard(rng: random.Random) -> tuple[str, int, str]:
    name, pronoun = rng.choice(_NAMES)
    items = rng.choice(_ITEMS)
    kind = rng.randrange(8)
    if kind == 0:
        a, b, c = rng.randint(2, 50), rng.randint(2, 50), rng.randint(2, 9)
        return f"What is ({a} + {b}) × {c}?", (a + b) * c, f"({a} + {b}) × {c} = {a + b} × {c} = {(a + b) * c}"
    if kind == 1:
        a, b = rng.randint(2, 12), rng.randint(2, 12)
        c = rng.randint(1, a * b)
        return f"What is {a} × {b} - {c}?", a * b - c, f"{a} × {b} - {c} = {a * b} - {c} = {a * b - c}"
    if kind == 2:
        b, quotient, c = rng.randint(2, 12), rng.randint(1, 12), rng.randint(1, 50)
        return f"What is {b * quotient} ÷ {b} + {c}?", quotient + c, f"{b * quotient} ÷ {b} + {c} = {quotient} + {c} = {quotient + c}"
    if kind == 3:
        a, b, c = rng.randint(1, 100), rng.randint(1, 100), rng.randint(1, 100)
        d = rng.randint(1, a + b + c)
        return f"What is {a} + {b} + {c} - {d}?", a + b + c - d, f"{a} + {b} + {c} - {d} = {a + b + c} - {d} = {a + b + c - d}"
    if kind == 4:
        a, b = rng.randint(5, 60), rng.randint(5, 60)
        c = rng.randint(1, a + b)
        question = (
            f"{name} has {a} {items} and buys {b} more. Then {pronoun.lower()} gives away {c}. "
            f"How many {items} does {name} have now?"
        )
        return question, a + b - c, f"{a} + {b} - {c} = {a + b} - {c} = {a + b - c}"
    if kind == 5:
        a, b = rng.randint(2, 12), rng.randint(2, 12)
        c = rng.randint(1, a * b)
        question = (
            f"{name} buys {a} boxes of {items} with {b} in each box and gives away {c} of them. "
            f"How many {items} are left?"
        )
        return question, a * b - c, f"{a} × {b} - {c} = {a * b} - {c} = {a * b - c}"
    if kind == 6:
        c, quotient = rng.randint(2, 10), rng.randint(2, 12)
        total = c * quotient
        a = rng.randint(1, total - 1)
        question = (
            f"{name} has {a} {items} and buys {total - a} more. {pronoun} shares them equally among "
            f"{c} friends. How many {items} does each friend get?"
        )
        return question, quotient, f"({a} + {total - a}) ÷ {c} = {total} ÷ {c} = {quotient}"
    a, b = rng.randint(5, 30), rng.randint(2, 9)
    c = rng.randint(1, a * b)
    question = f"{name} earns ${a} a day for {b} days and then spends ${c}. How many dollars does {name} have left?"
    return question, a * b - c, f"{a} × {b} - {c} = {a * b} - {c} = {a * b - c}"
