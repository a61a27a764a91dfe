"""The questions, with reference answers, that the checks of the judge ask about."""

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
