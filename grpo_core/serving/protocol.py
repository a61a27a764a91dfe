"""What the server reads and answers, as plain data: a request's batch checked against a reward, the OpenRLHF
request turned into batches, the catalogue entry of a reward. No web framework here, so it is tested directly."""

from __future__ import annotations

import json
from typing import Any

from grpo_core.rewards.reward import Reward

REASONS = ("error", "timeout", "unscorable")


class RequestError(Exception):
    """A request the server refuses: the HTTP status and one sentence saying what to send instead."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def parse_json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as error:  # RecursionError: nesting deeper than the parser's stack
        raise RequestError(400, f"the body is not valid JSON ({type(error).__name__}: {str(error)[:200]}); "
                                "send a JSON object") from None


def _texts(values: Any, key: str, n: int | None) -> list:
    if not isinstance(values, list):
        raise RequestError(422, f"'{key}' must be a list, got {type(values).__name__}")
    if n is not None and len(values) != n:
        raise RequestError(422, f"'{key}' has {len(values)} items but 'completions' has {n}; send one per completion")
    for index, value in enumerate(values):
        if not isinstance(value, (str, list, dict)):  # text, or chat messages as TRL gives them
            raise RequestError(422, f"'{key}[{index}]' is {type(value).__name__}; send text or chat messages "
                                    "([{\"role\": ..., \"content\": ...}])")
    return values


def batch_for(reward: Reward, data: Any) -> tuple[list, list | None, dict[str, list]]:
    """``(completions, prompts, columns)`` of a ``POST /rewards/NAME`` body for ``reward``, or a RequestError."""
    if not isinstance(data, dict):
        raise RequestError(422, f"the body must be a JSON object with 'completions' (and 'prompts' and the reward's "
                                f"columns), got {type(data).__name__}")
    if "params" in data or "reward_args" in data:
        raise RequestError(422, "a reward's parameters are fixed when the server starts (grpo-run serve "
                                "--reward-arg NAME.KEY=VALUE); send only prompts, completions and columns")
    if "completions" not in data:
        raise RequestError(422, "the body has no 'completions'; send {\"completions\": [...], \"prompts\": [...], "
                                "<column>: [...]}")
    completions = _texts(data["completions"], "completions", None)
    n = len(completions)
    prompts = _texts(data["prompts"], "prompts", n) if data.get("prompts") is not None else None
    columns = {}
    for source in reward.columns.values():
        if source not in data:
            if source in reward.optional.values():
                continue
            raise RequestError(422, f"reward '{reward.__name__}' needs the column '{source}' (one value per "
                                    f"completion); add \"{source}\": [...] to the body")
        values = data[source]
        if not isinstance(values, list) or len(values) != n:
            got = f"{len(values)} items" if isinstance(values, list) else type(values).__name__
            raise RequestError(422, f"column '{source}' must be a list of {n} values (one per completion), got {got}")
        columns[source] = values
    return completions, prompts, columns


def answer(scores: list, reasons: list) -> dict:
    """The JSON answer of ``POST /rewards/NAME``: scores (null when unscored), why each was not, the counts."""
    return {"scores": scores, "unscored": reasons,
            "counts": {f"{reason}s" if reason != "unscorable" else reason: reasons.count(reason) for reason in REASONS}}


def openrlhf_batches(data: Any, rewards: list[Reward]) -> list[tuple[list, list | None, dict[str, list]]]:
    """One ``(completions, prompts, columns)`` per reward from OpenRLHF's ``{"query", "prompts", "labels"}``.

    A query is the prompt followed by the response: the completion is the query with its prompt cut off the
    front (the whole query when it does not start with the prompt). A label fills the one column a reward needs;
    a reward needing several columns takes a label that is a JSON object with those keys.
    """
    if not isinstance(data, dict) or "query" not in data:
        raise RequestError(422, "the body must be a JSON object with 'query' (prompt + response per item), and "
                                "'prompts' and 'labels' as OpenRLHF's --remote_rm_url client sends them")
    queries = data["query"]
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        raise RequestError(422, "'query' must be a list of strings (prompt + response)")
    n = len(queries)
    prompts = data.get("prompts")
    if prompts is not None and (not isinstance(prompts, list) or len(prompts) != n
                                or not all(isinstance(p, str) for p in prompts)):
        raise RequestError(422, f"'prompts' must be a list of {n} strings, one per query")
    labels = data.get("labels")
    if labels is not None and (not isinstance(labels, list) or len(labels) != n):
        raise RequestError(422, f"'labels' must be a list of {n} values, one per query")
    completions = [query[len(prompt):] if prompt and query.startswith(prompt) else query
                   for query, prompt in zip(queries, prompts or [""] * n)]
    batches = []
    for reward in rewards:
        needed = [source for name, source in reward.columns.items() if name not in reward.optional]
        if needed and labels is None:
            raise RequestError(422, f"reward '{reward.__name__}' needs the column {', '.join(needed)}: send it as "
                                    "'labels' (OpenRLHF: --label_key)")
        columns: dict[str, list] = {source: [] for source in needed}
        for label in labels if needed else []:
            for source, value in _label_columns(label, needed, reward.__name__).items():
                columns[source].append(value)
        batches.append((completions, prompts, columns))
    return batches


def _label_columns(label: Any, needed: list[str], reward: str) -> dict[str, Any]:
    mapping = label
    if isinstance(label, str) and label.lstrip().startswith("{"):
        try:
            mapping = json.loads(label)
        except ValueError:
            mapping = None
    if isinstance(mapping, dict) and all(source in mapping for source in needed):
        return {source: mapping[source] for source in needed}
    if len(needed) == 1:
        return {needed[0]: label}
    raise RequestError(422, f"reward '{reward}' needs the columns {', '.join(needed)}; send each label as a JSON "
                            f"object with those keys")


def catalogue_entry(reward: Reward) -> dict:
    """A served reward as ``GET /rewards`` lists it: what it is, its bounds, the columns a request carries, and
    its parameters with the values it is served with and their defaults."""
    spec = reward.spec
    return {
        "name": spec.name,
        "description": spec.description,
        "bounds": list(spec.bounds),
        "columns": sorted(source for name, source in reward.columns.items() if name not in reward.optional),
        "optional_columns": sorted(reward.optional.values()),
        "parameters": {p.name: {"value": reward.params.get(p.name), "default": p.default, "type": p.type.__name__,
                                "help": p.help} for p in spec.params},
        "weight": reward.weight,
        "distribution": spec.distribution,
    }
