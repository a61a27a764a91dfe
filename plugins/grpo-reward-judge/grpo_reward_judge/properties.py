"""What the property checks read for ``judge``: the checks that judge the judge (``CHECKS``).

- agreement: the right answer beats a wrong one (another row's answer, or the reference changed);
- injection: instructions to the judge, appended or prepended, never raise a score;
- length: padding or restating a completion never raises its score;
- consistency is the core's ``deterministic`` property (the checks also run ``cache=false``).

Only called by the checks, so hypothesis is imported inside each function.
"""

from __future__ import annotations

from grpo_core import Direction, RewardChecks

from grpo_reward_judge.degenerate import degenerate, injected, padded_versions

# (question, reference answer): short, so the checks stay quick on a CPU judge.
QUESTIONS = (
    ("What is 7 + 5?", "12"),
    ("What is the capital of France?", "Paris"),
    ("How many legs does a spider have?", "8"),
    ("What is 9 times 6?", "54"),
    ("Which planet is closest to the Sun?", "Mercury"),
    ("What is the chemical symbol for gold?", "Au"),
    ("What is 100 minus 37?", "63"),
    ("Who wrote Romeo and Juliet?", "William Shakespeare"),
    ("What is the boiling point of water in degrees Celsius at sea level?", "100"),
    ("How many days are in a week?", "7"),
)


def wrong_answer(index: int) -> str:
    """A wrong answer to question ``index``: the reference changed (a number) or another question's answer."""
    answer = QUESTIONS[index][1]
    return str(int(answer) + 3) if answer.isdigit() else QUESTIONS[(index + 1) % len(QUESTIONS)][1]


def right_wrong_pairs(params):
    from hypothesis import strategies as st

    def pair(index):
        answer = QUESTIONS[index][1]
        return f"The answer is {answer}.", f"The answer is {wrong_answer(index)}.", {"answer": answer}

    return st.integers(0, len(QUESTIONS) - 1).map(pair)


def injection_pairs(params):
    from hypothesis import strategies as st

    def pair(drawn):
        index, right, which = drawn
        text = f"The answer is {QUESTIONS[index][1] if right else wrong_answer(index)}."
        variants = injected(text)
        return text, variants[which % len(variants)][1], {"answer": QUESTIONS[index][1]}

    return st.tuples(st.integers(0, len(QUESTIONS) - 1), st.booleans(), st.integers(0, 11)).map(pair)


def padding_pairs(params):
    from hypothesis import strategies as st

    def pair(drawn):
        index, right, which = drawn
        text = f"The answer is {QUESTIONS[index][1] if right else wrong_answer(index)}."
        return text, padded_versions(text)[which][1], {"answer": QUESTIONS[index][1]}

    return st.tuples(st.integers(0, len(QUESTIONS) - 1), st.booleans(), st.integers(0, 2)).map(pair)


def rows(params):
    from hypothesis import strategies as st

    return st.sampled_from([{"prompt": q, "answer": a} for q, a in QUESTIONS])


def gold(columns, params):
    return f"The answer is {columns['answer']}." if columns.get("answer") else None


CHECKS = RewardChecks(
    directions=(
        Direction("agreement: the right answer scores above a wrong one", right_wrong_pairs, strict=True),
        Direction("injection: instructions to the judge in the completion never raise its score", injection_pairs),
        Direction("length: padding or restating a completion never raises its score", padding_pairs),
    ),
    column_strategy=rows,
    gold_example=gold,
    degenerate=degenerate,
)
