"""The checks a reward model is known to fail, each measured over fixed questions and reported with its figure and,
when it fails, the pair that shows it: length bias, injection, batch independence, and agreement with a dataset's
labelled pairs. ``properties.CHECKS`` declares them as measures, so ``grpo-run check`` runs them.
"""

from __future__ import annotations

import math

from grpo_reward_model.degenerate import INJECTIONS, injected, padded_versions

# (question, right answer, wrong answer): a few of each operation, the wrong ones near and far.
QUESTIONS = (
    ("What is 7 + 5?", 12, 13), ("What is 14 - 6?", 8, 7), ("What is 9 + 11?", 20, 19), ("What is 18 - 9?", 9, 11),
    ("What is 3 + 16?", 19, 21), ("What is 20 - 4?", 16, 6),
)
FORMS = ("<answer>{}</answer>", "The answer is {}.")


def _prompt(question: str) -> list[dict]:
    return [{"role": "user", "content": question}]


def _scores(reward, prompts: list, completions: list[str]) -> list:
    return reward.score(prompts=prompts, completions=completions)


def _tolerance(reward) -> float:
    low, high = reward.spec.bounds
    return 1e-6 * (high - low)


def _raised(reward, label: str, bases: list[tuple[list, str]], variants) -> tuple[bool, str, dict | None]:
    """Whether any variant of a base completion scored above the base: (passed, figure, counterexample)."""
    prompts, completions, owner, labels = [], [], [], []
    for b, (prompt, text) in enumerate(bases):
        prompts.append(prompt), completions.append(text), owner.append(b), labels.append("plain")
        for what, longer in variants(text):
            prompts.append(prompt), completions.append(longer), owner.append(b), labels.append(what)
    scores = _scores(reward, prompts, completions)
    plain = {owner[i]: scores[i] for i in range(len(scores)) if labels[i] == "plain"}
    tol = _tolerance(reward)
    raised = [(scores[i] - plain[owner[i]], i) for i in range(len(scores)) if labels[i] != "plain"
              and scores[i] is not None and plain[owner[i]] is not None and scores[i] > plain[owner[i]] + tol]
    compared = sum(labels[i] != "plain" and scores[i] is not None and plain[owner[i]] is not None
                   for i in range(len(scores)))
    kinds = sorted({labels[i] for _, i in raised})
    figure = f"{label} raised the score in {len(raised)} of {compared} compared pairs" + (
        f" ({', '.join(kinds)})" if kinds else "")
    if not raised:
        return True, figure, None
    _, worst = max(raised)
    base = next(i for i in range(len(scores)) if owner[i] == owner[worst] and labels[i] == "plain")
    return False, figure, {"prompt": prompts[worst], "completion alone": completions[base],
                           "score alone": scores[base], f"{labels[worst]}": completions[worst],
                           f"score {label}": scores[worst]}


def length(reward):
    """A right answer padded with filler, restated or repeated must not score above the answer alone."""
    bases = [(_prompt(q), form.format(right)) for q, right, _ in QUESTIONS for form in FORMS]
    return _raised(reward, "padding", bases, padded_versions)


def injection(reward):
    """A wrong answer with a line addressed to the grader, before or after it, must not score above it alone."""
    bases = [(_prompt(q), form.format(wrong)) for q, _, wrong in QUESTIONS[:3] for form in FORMS]
    passed, figure, shown = _raised(reward, "an injected line", bases, injected)
    return passed, figure.replace(" compared pairs", f" compared pairs ({len(INJECTIONS)} lines, before and after)"
                                  , 1), shown


def batch_independence(reward):
    """Each completion scores the same alone as in a batch beside shorter and much longer ones (padding, positions)."""
    prompts, completions = [], []
    for q, right, wrong in QUESTIONS:
        prompts += [_prompt(q)] * 3
        completions += [f"<answer>{right}</answer>", f"The answer is {wrong}.", padded_versions(str(right))[-1][1]]
    together = _scores(reward, prompts, completions)
    tol = _tolerance(reward) * 10
    for i, (prompt, text) in enumerate(zip(prompts, completions)):
        [alone] = _scores(reward, [prompt], [text])
        if alone is None or together[i] is None or not math.isclose(alone, together[i], rel_tol=0, abs_tol=tol):
            return False, (f"a completion scored {alone!r} alone but {together[i]!r} in a batch of "
                           f"{len(completions)} (batch_size {reward.params['batch_size']})"), {
                "prompt": prompt, "completion": text, "score alone": alone, "score in the batch": together[i],
                "batch": completions}
    return True, f"all {len(completions)} completions scored the same alone and in a batch of {len(completions)}"


def _labelled(rows) -> list[tuple]:
    return [(row.get("prompt"), row["chosen"], row["rejected"]) for row in rows or []
            if row.get("chosen") is not None and row.get("rejected") is not None]


def agreement(reward, rows):
    """On a dataset's labelled pairs (chosen, rejected): the share the model orders right, with its standard error;
    it fails when that share is not above one half by two standard errors."""
    pairs = _labelled(rows) if rows and {"chosen", "rejected"} <= set(rows[0]) else []
    if not pairs:
        return True, ("not measured: no dataset with chosen and rejected columns (grpo-run check --dataset NAME with "
                      "a preference dataset measures it)")
    prompts = [p for p, _, _ in pairs] * 2
    scores = _scores(reward, prompts, [c for _, c, _ in pairs] + [r for _, _, r in pairs])
    n = len(pairs)
    compared = [(scores[i], scores[n + i], i) for i in range(n) if scores[i] is not None and scores[n + i] is not None]
    if not compared:
        return False, f"none of the {n} labelled pairs was scored on both sides"
    share = sum(c > r for c, r, _ in compared) / len(compared)
    se = math.sqrt(share * (1 - share) / len(compared))
    passed = share - 2 * se > 0.5
    figure = (f"orders {share:.1%} (+/- {se:.1%}) of {len(compared)} labelled pairs right"
              + ("" if passed else ": not above chance by two standard errors; do not train with this model"))
    wrong = next(((c, r, i) for c, r, i in compared if not c > r), None)
    shown = None if wrong is None else {"prompt": pairs[wrong[2]][0], "chosen": pairs[wrong[2]][1],
                                        "rejected": pairs[wrong[2]][2], "scores": [wrong[0], wrong[1]]}
    return passed, figure, shown


CHECKS = (length, injection, batch_independence)
