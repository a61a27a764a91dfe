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
    url, model, identity = await asyncio.to_thread(endpoint, base_url, model)
    prompts = list(prompts) if prompts is not None else [""] * len(completions)
    limit = asyncio.Semaphore(max_concurrency)
    loop = asyncio.get_running_loop()
    retried = []  # list.append is atomic: the request threads share it
    options = {"api_key_env": api_key_env, "temperature": temperature, "max_tokens": max_tokens,
               "timeout": timeout, "retries": retries, "on_retry": lambda: retried.append(1)}

    def message_of(index: int) -> str:
        row = {name: values[index] for name, values in columns.items()}
        text = completion_text(completions[index])[:max_chars]
        return chosen.fill(prompt_text(prompts[index])[:max_chars], text, row)

    async def one(message: str, key: str, executor: ThreadPoolExecutor):
        reply = cached(key) if cache else None
        if reply is not None:
            count("cache_hits")
        else:
            async with limit:
                try:
                    reply = await loop.run_in_executor(executor, lambda: chat(url, model, message, **options))
                except Failed as failure:
                    count(failure.reason + "s")
                    return failure
            if cache:
                store(key, reply)
        score = chosen.read(reply)
        return Unscored("unscorable", f"unreadable verdict: {reply[:80]!r}") if score is None else score

    messages = [message_of(i) for i in range(len(completions))]
    keys = [cache_key(identity, model, chosen.identity(), m, temperature, max_tokens) for m in messages]
    unique = dict(zip(keys, messages))  # a group's identical completions are asked once
    with ThreadPoolExecutor(max(1, min(max_concurrency, len(unique))), thread_name_prefix="judge") as pool:
        answers = await asyncio.gather(*(one(message, key, pool) for key, message in unique.items()))
    if log_metric is not None:
        log_metric("rewards/judge/retries", float(len(retried)))
    by_key = dict(zip(unique, answers))
    results = [by_key[key] for key in keys]
    failures = [r for r in results if isinstance(r, Failed)]
    if results and len(failures) == len(results) and all(f.unreachable for f in failures):
        raise RewardError(f"the judge at {url} cannot be reached ({failures[0]}); start it, or point "
                          f"base_url at a running OpenAI-compatible server")
    return [Unscored(r.reason, str(r)) if isinstance(r, Failed) else r for r in results]


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
