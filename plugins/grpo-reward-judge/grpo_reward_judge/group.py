"""Group mode, the reward ``judge-group``: the judge sees all completions of one prompt at once, numbered, and
gives per-completion scores or a ranking; the score of a completion is relative to the others of its group.

- Groups: completions with the same prompt and the same dataset columns, wherever they stand in the batch (TRL
  puts a prompt's ``num_generations`` completions next to each other; the order does not matter here). A group
  of one is scored pointwise, with the rubric of the same name.
- ``scores``: one line per completion, ``NUMBER: SCORE`` on the rubric's scale, mapped exactly onto [0, 1].
- ``ranking``: ``3 > 1 = 2 > 4``, best first, ``=`` a tie; the positions are spread evenly over [0, 1] (best 1,
  worst 0) and tied completions share the mean of the positions they take. A partial ranking keeps its
  positions from the top (``3 > 1`` of four: 1 and 2/3).
- A verdict with nothing readable gives every completion of its group ``Unscored("unscorable", "unreadable
  verdict: ...")``; one that leaves some completions out scores those it names and leaves the others unscored.
- ``both_orders``: the group is also shown reversed and each completion gets the mean of its two scores (unscored
  unless both verdicts score it), so a judge that favours a position favours every completion once.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction

from grpo_core import Unscored, completion_text

from grpo_reward_judge.client import Failed
from grpo_reward_judge.reward import Judge, prompt_text, row_of, unscored
from grpo_reward_judge.rubrics import GroupRubric, get_group_rubric

VERDICTS = ("scores", "ranking")
_LINE = re.compile(r"^[\s*_#>-]*(?:answer|response|completion)?\s*#?\s*(\d+)[*_]*\s*(?::|=|\)|\]|\.(?=[\s*_])|-|–|is)[*_]*\s*"
                   r"(\d+(?:\.\d+)?)(?:\s*/\s*(\d+))?", re.IGNORECASE | re.MULTILINE)
_CHAIN = re.compile(r"(?:answer\s*)?#?\d+(?:\s*[>=]\s*(?:answer\s*)?#?\d+)+", re.IGNORECASE)


def numbered(texts: list[str]) -> str:
    return "\n\n".join(f"Answer {i}:\n{text}" for i, text in enumerate(texts, 1))


def read_scores(verdict: str, n: int, scale: tuple[int, int]) -> dict[int, Fraction]:
    """Completion index (from 0) -> score in [0, 1] from lines ``NUMBER: SCORE``; a line naming no completion of
    the group or a score off the scale is passed over, and a completion scored twice differently is left out."""
    low, high = scale
    found: dict[int, Fraction] = {}
    conflicting = set()
    for match in _LINE.finditer(verdict):
        number, value, out_of = int(match.group(1)), Fraction(match.group(2)), match.group(3)
        if not 1 <= number <= n or (out_of is not None and int(out_of) != high) or not low <= value <= high:
            continue
        score = (value - low) / (high - low)
        if found.setdefault(number - 1, score) != score:
            conflicting.add(number - 1)
    return {i: s for i, s in found.items() if i not in conflicting}


def read_ranking(verdict: str, n: int) -> dict[int, Fraction]:
    """Completion index (from 0) -> score in [0, 1] from the first chain ``a > b = c`` that names only
    completions of the group, each once; positions spread evenly from 1 (best) to 0 (worst of ``n``)."""
    for match in _CHAIN.finditer(verdict):
        tokens = re.findall(r"\d+|[>=]", match.group(0))
        numbers = [int(t) for t in tokens if t.isdigit()]
        if any(not 1 <= k <= n for k in numbers) or len(set(numbers)) != len(numbers):
            continue
        tiers, tier = [], [numbers[0]]
        for sign, k in zip(tokens[1::2], numbers[1:]):
            if sign == ">":
                tiers.append(tier)
                tier = []
            tier.append(k)
        tiers.append(tier)
        scores, position = {}, 0
        for tier in tiers:
            mean = Fraction(2 * position + len(tier) - 1, 2)  # tied ones share the mean of their positions
            scores.update({k - 1: 1 - mean / (n - 1) for k in tier})
            position += len(tier)
        return scores
    return {}


def read_group(verdict: str, n: int, how: str, scale: tuple[int, int]) -> dict[int, Fraction]:
    return read_scores(verdict, n, scale) if how == "scores" else read_ranking(verdict, n)


def groups_of(prompts: list, columns: dict, n: int) -> list[list[int]]:
    """The batch's indices grouped by equal prompt and dataset columns, in order of first appearance."""
    groups: dict[str, list[int]] = {}
    for i in range(n):
        key = json.dumps([prompts[i], row_of(columns, i)], sort_keys=True, default=repr)
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def _verdict_scores(reply, n: int, how: str, scale) -> list:
    """One verdict on a group in the order shown: a Fraction or an Unscored per position."""
    if isinstance(reply, Failed):
        return [unscored(reply)] * n
    read = read_group(reply, n, how, scale)
    if not read:
        return [unscored(reply)] * n
    return [read[i] if i in read else Unscored("unscorable", f"the verdict does not score answer {i + 1}: "
                                                             f"{reply[:80]!r}") for i in range(n)]


async def judge_group_reward(completions, prompts=None, *, base_url="", model="", api_key_env="OPENAI_API_KEY",
                             rubric="correctness", verdict="scores", both_orders=False, temperature=0.0,
                             max_tokens=64, max_concurrency=8, retries=3, timeout=60.0, max_chars=4000, cache=True,
                             log_metric=None, **columns) -> list:
    """A score in [0, 1] per completion from the judge's verdict on all completions of its prompt (one request
    per group, two with ``both_orders``), or Unscored as for ``judge``. Each completion is clipped to its share of
    ``max_chars`` (``max_chars // n``). Retries are logged as ``rewards/judge-group/retries``."""
    chosen: GroupRubric = get_group_rubric(rubric)
    single = chosen.pointwise_rubric()
    judge = await Judge.open(base_url, model, api_key_env=api_key_env, temperature=temperature,
                             max_tokens=max_tokens, max_concurrency=max_concurrency, retries=retries,
                             timeout=timeout, cache=cache)
    texts = [completion_text(c) for c in completions]
    prompts = list(prompts) if prompts is not None else [""] * len(texts)
    groups = groups_of(prompts, columns, len(texts))
    requests: dict[str, str] = {}
    asked = []  # per group: [(key, the group's indices in the order shown)]

    def ask(message: str, identity: str) -> str:
        key = judge.key(identity, message)
        requests[key] = message
        return key

    for members in groups:
        first = members[0]
        prompt, row = prompt_text(prompts[first])[:max_chars], row_of(columns, first)
        if len(members) == 1:
            asked.append([(ask(single.fill(prompt, texts[first][:max_chars], row), single.identity()), members)])
            continue
        share = max(1, max_chars // len(members))
        orders = [members, members[::-1]] if both_orders else [members]
        asked.append([(ask(chosen.fill(prompt, numbered([texts[i][:share] for i in order]), len(order), row,
                                       verdict), chosen.identity(verdict)), order) for order in orders])
    replies = await judge.ask(requests)
    judge.log_retries(log_metric, "judge-group")

    results: list = [None] * len(texts)
    for members, views in zip(groups, asked):
        if len(members) == 1:
            reply = replies[views[0][0]]
            score = None if isinstance(reply, Failed) else single.read(reply)
            results[members[0]] = unscored(reply) if score is None else score
            continue
        seen: dict[int, list] = {i: [] for i in members}
        for key, order in views:
            for i, value in zip(order, _verdict_scores(replies[key], len(order), verdict, chosen.scale)):
                seen[i].append(value)
        for i, values in seen.items():
            missing = next((v for v in values if isinstance(v, Unscored)), None)
            results[i] = missing if missing is not None else float(sum(values) / len(values))
    return results


def group_columns_for(params: dict) -> tuple[str, ...]:
    chosen = get_group_rubric(params["rubric"])
    return tuple(dict.fromkeys(chosen.columns + chosen.pointwise_rubric().columns))


def validate_group_params(params: dict) -> None:
    from grpo_reward_judge.reward import validate_params

    chosen = get_group_rubric(params["rubric"])
    chosen.pointwise_rubric()  # a group of one is scored with it: it must exist
    validate_params({**params, "rubric": chosen.pointwise or chosen.name})


def order_consistency(reward, groups: int = 5):
    """Each group of completions (a right answer, a wrong one, no answer) scored in its order and reversed, in two
    batches: in how many groups the winner (the completions with the top score) changed, of the groups whose
    completions were all scored both times, and how often the completion shown first won. An ``audit.Finding``."""
    from grpo_reward_judge.audit import Finding
    from grpo_reward_judge.questions import QUESTIONS, wrong_answer

    shown = []
    for i in range(groups):
        question, answer = QUESTIONS[i % len(QUESTIONS)]
        texts = [f"The answer is {answer}.", f"The answer is {wrong_answer(i % len(QUESTIONS))}.", "I do not know."]
        shown.append((question, answer, texts[i % 3:] + texts[:i % 3]))  # the right answer in each position in turn

    def score(orders):
        prompts = [q for q, _, texts in orders for _ in texts]
        columns = {source: [a for _, a, texts in orders for _ in texts] for source in reward.columns.values()}
        flat = reward.score(prompts=prompts, completions=[t for _, _, texts in orders for t in texts], **columns)
        found, at = [], 0
        for _, _, texts in orders:
            found.append(flat[at:at + len(texts)])
            at += len(texts)
        return found

    forward = score(shown)
    backward = [s[::-1] for s in score([(q, a, texts[::-1]) for q, a, texts in shown])]

    def winners(scores):
        top = max(scores)
        return frozenset(i for i, s in enumerate(scores) if s == top)

    compared = [(winners(f), winners(b), len(f)) for f, b in zip(forward, backward) if None not in f + b]
    changed = sum(f != b for f, b, _ in compared)
    first = sum((0 in f) + (n - 1 in b) for f, b, n in compared)  # b indexes the forward order: n - 1 was shown first
    figure = (f"the winner changed in {changed} of {len(compared)} groups when the order was reversed; the answer "
              f"shown first won {first} of {2 * len(compared)} times")
    if len(compared) < groups:
        figure += f"; {groups - len(compared)} groups had an unscored completion"
    return Finding("order consistency", bool(compared) and not changed, figure)
