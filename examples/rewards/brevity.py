"""A reward in a file, used without a package: a right answer pays more the shorter the completion is.

    grpo-run check --reward ./examples/rewards/brevity.py:score
    grpo-run --reward ./examples/rewards/brevity.py:score --dataset arithmetic --model tiny-random --max-steps 2
    grpo-run ... --reward-arg brevity:score.max_words=10

Only a right answer pays: the number inside the last ``<answer>`` tag must equal the row's ``answer``, so an
empty, padded or guessed completion earns nothing, however short. A row whose gold answer is not a number is not
scored (None), rather than paid.
"""

from grpo_core import Direction, RewardChecks, answer_tag, parse_number, same_number


def score(completion, answer, max_words: int = 20):
    """1.0 for a right answer within max_words words, less the longer it runs past them; 0.0 for a wrong one."""
    gold = parse_number(str(answer))
    if gold is None:
        return None
    given = answer_tag(completion)
    guess = parse_number(given) if given is not None else None
    if guess is None or not same_number(gold, guess):
        return 0.0
    words = len(completion.split())
    return 1.0 if words <= max_words else max_words / words


def _rows(params):
    from hypothesis import strategies as st

    return st.tuples(st.integers(0, 99), st.integers(0, 99)).map(
        lambda ab: {"prompt": f"What is {ab[0]} + {ab[1]}?", "answer": str(ab[0] + ab[1])})


def _gold(columns, params):
    return f"<answer>{columns['answer']}</answer>"


def _shorter_is_better(params):
    from hypothesis import strategies as st

    def pair(draw_words):
        answer, extra = draw_words
        right = f"<answer>{answer}</answer>"
        return right, "so " * extra + right, {"answer": str(answer)}

    return st.tuples(st.integers(0, 999), st.integers(1, 200)).map(pair)


def _skips_the_task(prompt, columns, params):
    """Short completions that answer without solving: placeholders, the question's own numbers in the tag."""
    from grpo_core.testing import placeholders, prompt_numbers

    tag = "<answer>{}</answer>"
    return [*placeholders(("answer",)), *prompt_numbers(prompt, tag, exclude=[columns["answer"]])]


def _row_problems(columns, params):
    answer = columns["answer"]
    return [] if parse_number(str(answer)) is not None else [("gold answer is not a number", answer)]


# What a signature cannot say, beside the function: its range and its own checks (grpo-run check reads them).
score.bounds = (0.0, 1.0)
score.checks = RewardChecks(
    column_strategy=_rows,
    gold_example=_gold,
    degenerate=_skips_the_task,
    row_problems=_row_problems,
    directions=(Direction("a right answer scores no less when shorter", _shorter_is_better),),
)
