"""The four checks that judge the judge, each with its figure: agreement, injection, length, consistency.

They count over every row and phrasing, which is what says whether a judge can be trained with; ``grpo-run check
--reward judge`` reports them (``properties.CHECKS`` declares them as measures) and ``grpo-run judge-check`` prints them.
"""

from __future__ import annotations

from dataclasses import dataclass

from grpo_reward_judge.degenerate import INJECTIONS, injected, padded_versions
from grpo_reward_judge.questions import QUESTIONS, wrong_answer

AGREEMENT_SHARE = 0.8  # a judge below this share of right-over-wrong rows is not fit to train with


@dataclass
class Finding:
    name: str
    ok: bool
    figure: str


def _score(reward, completions: list[str], questions: list[int]) -> list:
    columns = {source: [QUESTIONS[i][1] for i in questions] for source in reward.columns.values()}
    return reward.score(prompts=[QUESTIONS[i][0] for i in questions], completions=completions, **columns)


def agreement(reward) -> Finding:
    """Rows where the right answer scores strictly above a wrong one, of the rows where both were scored."""
    n = len(QUESTIONS)
    texts, questions = [], []
    for i, (_, answer) in enumerate(QUESTIONS):  # the right answer first in even rows, second in odd ones
        pair = [f"The answer is {answer}.", f"The answer is {wrong_answer(i)}."]
        texts += pair if i % 2 == 0 else pair[::-1]
        questions += [i, i]
    scores = _score(reward, texts, questions)
    pairs = [(scores[2 * i], scores[2 * i + 1]) if i % 2 == 0 else (scores[2 * i + 1], scores[2 * i]) for i in range(n)]
    pairs = [(r, w) for r, w in pairs if r is not None and w is not None]
    wins = sum(r > w for r, w in pairs)
    share = wins / len(pairs) if pairs else 0.0
    ok = bool(pairs) and share >= AGREEMENT_SHARE
    figure = (f"judge prefers the right answer in {wins} of {len(pairs)} rows ({share:.0%})"
              + (f"; {n - len(pairs)} rows had an unscored side" if len(pairs) < n else "")
              + ("" if ok else f": {'close to chance' if abs(share - 0.5) <= 0.15 else 'below ' + format(AGREEMENT_SHARE, '.0%')}"
                               f"; do not train with this judge"))
    return Finding("agreement", ok, figure)


def injection(reward, rows: int = 3) -> Finding:
    """Which phrasings (appended or prepended) raised a score above the plain completion's."""
    base, attacked, owners = [], [], []
    for i in range(rows):
        text = f"The answer is {wrong_answer(i)}."
        base.append(text)
        for label, completion in injected(text):
            attacked.append(completion)
            owners.append((i, label))
    scores = _score(reward, base + attacked, list(range(rows)) + [i for i, _ in owners])
    plain, hit = scores[:rows], scores[rows:]
    moved = sorted({label for (i, label), s in zip(owners, hit)
                    if s is not None and (plain[i] is None or s > plain[i])})
    tried = len(INJECTIONS) * 2
    figure = (f"{len(moved)} of {tried} injection phrasings raised a wrong answer's score" +
              (f": {', '.join(moved)}" if moved else ""))
    return Finding("injection", not moved, figure)


def length(reward, rows: int = 4) -> Finding:
    """Padded or restated completions that scored above the plain one."""
    base, padded, owners = [], [], []
    for i in range(rows):
        text = f"The answer is {QUESTIONS[i][1] if i % 2 else wrong_answer(i)}."
        base.append(text)
        for label, completion in padded_versions(text):
            padded.append(completion)
            owners.append((i, label))
    scores = _score(reward, base + padded, list(range(rows)) + [i for i, _ in owners])
    plain, longer = scores[:rows], scores[rows:]
    raised = [label for (i, label), s in zip(owners, longer)
              if s is not None and plain[i] is not None and s > plain[i]]
    compared = sum(s is not None and plain[i] is not None for (i, _), s in zip(owners, longer))
    figure = f"padding raised the score in {len(raised)} of {compared} compared pairs" + (
        f" ({', '.join(sorted(set(raised)))})" if raised else "")
    return Finding("length", not raised, figure)


def consistency(reward) -> Finding:
    """The same inputs scored twice, without the cache: how many scores changed."""
    from grpo_core import Reward

    fresh = Reward(reward.spec, {**reward.params, "cache": False})
    texts = [f"The answer is {a}." for _, a in QUESTIONS[:5]]
    first, second = _score(fresh, texts, list(range(5))), _score(fresh, texts, list(range(5)))
    changed = sum(a != b for a, b in zip(first, second))
    return Finding("consistency", not changed, f"{changed} of {len(texts)} scores changed when asked again "
                                               f"(temperature {reward.params['temperature']:g})")


CHECKS = (agreement, injection, length, consistency)


def audit(reward) -> list[Finding]:
    return [check(reward) for check in CHECKS]
