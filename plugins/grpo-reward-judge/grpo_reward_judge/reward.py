"""How ``judge`` scores: each completion's rubric prompt sent to the judge, concurrently, its verdict read."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from grpo_core import RewardError, Unscored, completion_text

from grpo_reward_judge.client import Failed, cache_key, cached, chat, count, store
from grpo_reward_judge.rubrics import get_rubric


def prompt_text(prompt) -> str:
    """The prompt as text: a string as is, chat messages as their last user message."""
    if prompt is None or isinstance(prompt, str):
        return prompt or ""
    users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
    return completion_text((users or list(prompt))[-1:])


def endpoint(base_url: str, model: str) -> tuple[str, str, str]:
    """(url, model, identity for the cache): the embedded server, started on first use, when base_url is empty."""
    if base_url:
        return base_url, model, base_url.rstrip("/")
    from grpo_reward_judge.server import embedded_server

    server = embedded_server()
    # the embedded server's port changes from run to run; its verdicts do not
    return server.url, server.model, "embedded"


class Judge:
    """One batch's way to the judge: the endpoint, the request options, the cache, and the retries counted."""

    def __init__(self, url: str, model: str, identity: str, *, api_key_env: str, temperature: float,
                 max_tokens: int, max_concurrency: int, retries: int, timeout: float, cache: bool) -> None:
        self.url, self.model, self.identity, self.cache = url, model, identity, cache
        self.temperature, self.max_tokens, self.max_concurrency = temperature, max_tokens, max_concurrency
        self.retried = []  # list.append is atomic: the request threads share it
        self.options = {"api_key_env": api_key_env, "temperature": temperature, "max_tokens": max_tokens,
                        "timeout": timeout, "retries": retries, "on_retry": lambda: self.retried.append(1)}

    @classmethod
    async def open(cls, base_url: str, model: str, **options) -> "Judge":
        url, model, identity = await asyncio.to_thread(endpoint, base_url, model)
        return cls(url, model, identity, **options)

    def key(self, rubric_identity: str, message: str) -> str:
        return cache_key(self.identity, self.model, rubric_identity, message, self.temperature, self.max_tokens)

    async def ask(self, requests: dict[str, str]) -> dict[str, "str | Failed"]:
        """The reply (or Failed) to each message of ``requests`` (cache key -> message), ``max_concurrency`` at
        a time; raises RewardError naming the URL when none of them could connect."""
        limit = asyncio.Semaphore(self.max_concurrency)
        loop = asyncio.get_running_loop()

        async def one(message: str, key: str, executor: ThreadPoolExecutor):
            reply = cached(key) if self.cache else None
            if reply is not None:
                count("cache_hits")
                return reply
            async with limit:
                try:
                    reply = await loop.run_in_executor(
                        executor, lambda: chat(self.url, self.model, message, **self.options))
                except Failed as failure:
                    count(failure.reason + "s")
                    return failure
            if self.cache:
                store(key, reply)
            return reply

        if not requests:
            return {}
        with ThreadPoolExecutor(max(1, min(self.max_concurrency, len(requests))), thread_name_prefix="judge") as pool:
            answers = await asyncio.gather(*(one(message, key, pool) for key, message in requests.items()))
        if all(isinstance(a, Failed) and a.unreachable for a in answers):
            raise RewardError(f"the judge at {self.url} cannot be reached ({answers[0]}); start it, or point "
                              f"base_url at a running OpenAI-compatible server")
        return dict(zip(requests, answers))

    def log_retries(self, log_metric, name: str) -> None:
        if log_metric is not None:
            log_metric(f"rewards/{name}/retries", float(len(self.retried)))


def unscored(reply: "str | Failed") -> Unscored:
    """What a failed request or an unreadable verdict is scored."""
    if isinstance(reply, Failed):
        return Unscored(reply.reason, str(reply))
    return Unscored("unscorable", f"unreadable verdict: {reply[:80]!r}")


def row_of(columns: dict, index: int) -> dict:
    return {name: values[index] for name, values in columns.items()}


async def judge_reward(completions, prompts=None, *, base_url="", model="", api_key_env="OPENAI_API_KEY",
                       rubric="correctness", temperature=0.0, max_tokens=8, max_concurrency=8, retries=3,
                       timeout=60.0, max_chars=4000, cache=True, log_metric=None, **columns) -> list:
    """A score in [0, 1] per completion from the judge's verdict on the rubric, or Unscored: "timeout" or
    "error" for a request that failed after its retries, "unscorable" for a verdict that cannot be read.

    Every item of the batch is one request, ``max_concurrency`` at a time. A batch none of whose requests could
    connect stops the run (RewardError naming the URL) instead of training on nothing. In training, the batch's
    retries are logged as ``rewards/judge/retries``.
    """
    chosen = get_rubric(rubric)
    judge = await Judge.open(base_url, model, api_key_env=api_key_env, temperature=temperature,
                             max_tokens=max_tokens, max_concurrency=max_concurrency, retries=retries,
                             timeout=timeout, cache=cache)
    prompts = list(prompts) if prompts is not None else [""] * len(completions)
    messages = [chosen.fill(prompt_text(prompts[i])[:max_chars], completion_text(completions[i])[:max_chars],
                            row_of(columns, i)) for i in range(len(completions))]
    keys = [judge.key(chosen.identity(), m) for m in messages]
    replies = await judge.ask(dict(zip(keys, messages)))  # a group's identical completions are asked once
    judge.log_retries(log_metric, "judge")
    results = []
    for key in keys:
        reply = replies[key]
        score = None if isinstance(reply, Failed) else chosen.read(reply)
        results.append(unscored(reply) if score is None else score)
    return results


def columns_for(params: dict) -> tuple[str, ...]:
    return get_rubric(params["rubric"]).columns


def validate_params(params: dict) -> None:
    get_rubric(params["rubric"])
    if params["max_concurrency"] < 1:
        raise ValueError(f"max_concurrency must be 1 or more, got {params['max_concurrency']}")
    if params["max_tokens"] < 1:
        raise ValueError(f"max_tokens must be 1 or more, got {params['max_tokens']}")
    if params["base_url"] and not params["model"]:
        raise ValueError(f"base_url {params['base_url']} is given without a model; name the served model with "
                         f"--reward-arg judge.model=NAME")
