"""Reward: a RewardSpec with its parameters bound, the callable with TRL's reward-function signature."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import math
import pickle
import sys
from typing import Any, Callable

from grpo_core.errors import RewardError, UsageError
from grpo_core.rewards.backend import scoring_pool
from grpo_core.rewards.pool import TIMEOUT, Failure
from grpo_core.rewards.unscored import Unscored


@functools.lru_cache(maxsize=256)
def _signature(func: Callable) -> tuple[frozenset, bool]:
    accepted = inspect.signature(func).parameters
    return frozenset(accepted), any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())


def _accepts(func: Callable) -> tuple[frozenset, bool]:
    try:
        return _signature(func)
    except TypeError:  # an unhashable callable
        return _signature.__wrapped__(func)


def call_arguments(spec, params: dict, texts: list[str], columns: dict[str, list],
                   prompts: list | None = None, completion_ids: list | None = None,
                   index: int | None = None, log_metric: Callable | None = None) -> tuple[tuple, dict]:
    """The ``(args, kwargs)`` with which ``spec.func`` is called: item ``index`` of a batch, or the batch.

    The one place that decides a reward's call, used by the Reward callable and by the checks alike.
    ``columns`` maps the reward's column names to one value per completion. The function gets only
    the parameters it takes (all of them if it takes ``**kwargs``); a column wins over a parameter of
    the same name; ``completion_ids``, ``prompt`` and ``prompts`` are passed when the function names them, and
    so is ``log_metric``: TRL's ``log_metric(name, value)`` in training (a metric such as
    ``rewards/NAME/retries``, averaged over the calls of a logging step and over processes), None elsewhere.
    ``index=None`` is the batched call: lists for every column, ``prompt`` and ``prompts`` both the list.
    """
    accepted, takes_all = _accepts(spec.func)
    remaps = getattr(spec, "remaps", ())
    kwargs = {k: v for k, v in params.items() if k in accepted or takes_all and k not in remaps}
    if getattr(spec, "trl_call", False):  # as TRL calls it: keywords only, the completions in the run's shape
        kwargs.update(columns)
        kwargs["completions"] = [shaped(c, spec.completion_shape) for c in texts]
        n = len(texts)  # TRL always passes prompts and token ids: a caller without them gets empty ones
        extras = {"prompts": [""] * n if prompts is None else prompts,
                  "completion_ids": [[] for _ in range(n)] if completion_ids is None else completion_ids,
                  "log_metric": log_metric, "trainer_state": None}  # the Reward passes TRL's own where given
        kwargs.update({key: value for key, value in extras.items() if takes_all or key in accepted})
        named = {"reward_name": spec.name, "data_source": getattr(spec, "dataset_name", "")}  # for adapters only
        kwargs.update({key: value for key, value in named.items() if key in accepted})
        return (), kwargs
    if index is None:
        kwargs.update(columns)
        extras = {"completion_ids": completion_ids, "prompt": prompts, "prompts": prompts, "log_metric": log_metric}
        args = (texts,)
    else:
        kwargs.update({name: values[index] for name, values in columns.items()})
        extras = {"completion_ids": None if completion_ids is None else completion_ids[index],
                  "prompt": None if prompts is None else prompts[index], "prompts": prompts, "log_metric": log_metric}
        args = (texts[index],)
    kwargs.update({key: value for key, value in extras.items() if key in accepted})
    return args, kwargs


def shaped(completion: Any, shape: str) -> Any:
    """A completion in the shape a reward written for TRL reads: "chat" (``[{"role": "assistant", "content":
    ...}]``), "text", or "" (as given)."""
    if shape == "text":
        return completion_text(completion)
    if shape == "chat" and not isinstance(completion, list):
        return [{"role": "assistant", "content": completion_text(completion)}]
    return completion


def completion_text(completion: Any) -> str:
    """The text of a completion in either shape TRL produces.

    Standard datasets give a string; conversational ones give ``[{"role": "assistant",
    "content": ...}]``, where content may be None or a list of ``{"type": "text"}`` parts.
    """
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return _content_text(completion.get("content"))
    if isinstance(completion, (list, tuple)):
        messages = [m for m in completion if isinstance(m, dict)]
        assistant = [m for m in messages if m.get("role", "assistant") == "assistant"] or messages
        return "".join(_content_text(m.get("content")) for m in assistant)
    return str(completion)


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text") or "" if isinstance(part, dict) else str(part) for part in content
        )
    return str(content)


class Reward:
    """A RewardSpec with its parameters bound, callable with TRL's batch signature.

    ``__name__`` is the plugin name, so TRL logs ``rewards/<name>/mean``. ``score`` is the one way a reward is
    scored, whoever calls it (training, the checks, preflight, sample, the pytest plugin); calling a ``Reward`` is
    ``score``, and calling a ``ConcurrentReward`` (what ``load_rewards`` gives for a reward that waits) awaits it.
    """

    def __init__(self, spec, params: dict, weight: float | None = None) -> None:
        if getattr(spec, "bounds_for", None) is not None:  # bounds set by the parameters: the bound spec holds them
            spec = dataclasses.replace(spec, bounds=tuple(float(b) for b in spec.bounds_for(params)))
        self.spec = spec
        self.params = params
        self.weight = spec.weight if weight is None else weight
        self.__name__ = spec.name
        # every column the reward reads, name -> dataset column; those in ``optional`` may be absent
        self.optional = spec.optional_column_sources(params)
        self.columns = {**spec.required_columns(params), **self.optional}
        self.timeout = item_timeout(spec, params)
        if self.timeout is not None and not spec.batched and not _is_async(spec.func):
            if "log_metric" in _accepts(spec.func)[0]:
                raise UsageError(
                    f"reward '{spec.name}' declares a timeout, so each completion is scored in a worker process, "
                    f"where TRL's log_metric cannot be called; drop its log_metric parameter, or make it batched"
                )
            try:
                pickle.dumps(spec.func)
                if getattr(spec.func, "__module__", None) == "__main__":
                    raise TypeError("worker processes cannot import functions defined in __main__")
            except Exception as error:
                raise UsageError(
                    f"reward '{spec.name}' declares a timeout, so its function must be picklable "
                    f"(defined at the top level of an importable module): {error}"
                ) from None

    def __repr__(self) -> str:
        return f"<Reward {self.spec.name} params={self.params} weight={self.weight}>"

    def fit_dataset(self, column_names, conversational: bool, name: str = "") -> None:
        """Fit a reward written for TRL to the run's dataset, as TRL would call it there: its completions in the
        dataset's shape (message lists for a conversational prompt, text otherwise) and, when it takes
        ``**kwargs``, every column of the dataset. Other rewards are left as they are."""
        if not getattr(self.spec, "trl_call", False):
            return
        changes: dict = {"dataset_name": name}
        if self.spec.completion_shape != "text":  # an adapter that reads text keeps it
            changes["completion_shape"] = "chat" if conversational else "text"
        if _accepts(self.spec.func)[1]:
            declared = set(self.spec.required_columns(self.params))
            changes["optional_columns"] = tuple(c for c in column_names if c not in declared
                                                and c not in ("prompt", "completion", "completion_ids"))
        self.spec = dataclasses.replace(self.spec, **changes)
        self.optional = self.spec.optional_column_sources(self.params)
        self.columns = {**self.spec.required_columns(self.params), **self.optional}

    def __call__(self, prompts=None, completions=None, completion_ids=None, **kwargs) -> list[float | None]:
        return self.score(prompts, completions, completion_ids, **kwargs)

    def score(self, prompts=None, completions=None, completion_ids=None, **kwargs) -> list[float | None]:
        """The scores of a batch, with TRL's reward-function arguments; None for an item not scored."""
        return self.score_with_reasons(prompts, completions, completion_ids, **kwargs)[0]

    def score_with_reasons(self, prompts=None, completions=None, completion_ids=None,
                           **kwargs) -> tuple[list[float | None], list[str | None]]:
        """``score``'s scores and, per item, why it was not scored: "error", "timeout", "unscorable" or None."""
        completions = list(completions or [])
        n = len(completions)
        # a reward written for TRL gets the completions as TRL gives them; every other, their text
        texts = completions if getattr(self.spec, "trl_call", False) else [completion_text(c) for c in completions]
        columns = {}
        for name, source in self.columns.items():
            if source in kwargs:
                columns[name] = list(kwargs[source])
            elif name not in self.optional:
                remap = any(p.name == f"{name}_column" for p in self.spec.params)
                raise RewardError(
                    f"reward '{self.spec.name}' needs the dataset column '{source}', but the batch has "
                    f"{', '.join(sorted(k for k in kwargs if k not in _TRL_KWARGS)) or 'no columns'}; add that "
                    f"column to the dataset" + (f", or name the column that holds it with the reward argument "
                                                f"{name}_column=COLUMN" if remap else "")
                )
        log_metric = kwargs.get("log_metric")
        call = (texts, columns, prompts, completion_ids, log_metric)
        if self.spec.batched:
            scores, reasons = self._score_batch(call, n, {key: kwargs[key] for key in _TRL_KWARGS if key in kwargs
                                                         and key != "log_metric"})
        else:
            scores, reasons = self._score_items(call, n)
        if log_metric is not None:
            # TRL averages a metric over the processes' calls of one generation batch; scaled by the number
            # of processes, that average is the batch's total count.
            processes = _process_count()
            for reason, metric in (("error", "errors"), ("timeout", "timeouts"), ("unscorable", "unscorable")):
                log_metric(f"rewards/{self.spec.name}/{metric}", float(reasons.count(reason) * processes))
        if self.spec.observe is not None:
            self.spec.observe(columns, list(scores), self.params)
        return scores, reasons

    def _score_items(self, call, n):
        texts, columns, prompts, completion_ids, log_metric = call
        calls = [call_arguments(self.spec, self.params, texts, columns, prompts, completion_ids, i, log_metric)
                 for i in range(n)]
        if _is_async(self.spec.func):  # waits on I/O here: its limit cancels the item's wait
            outcomes = run_coroutine(_gather_items(self.spec.func, calls, self.timeout))
        elif self.timeout is not None and n:
            raw = scoring_pool().map(self.spec.func, calls, self.timeout)
            outcomes = [
                ("timeout", None) if r is TIMEOUT else ("error", r.error) if isinstance(r, Failure) else ("ok", r)
                for r in raw
            ]
        else:
            outcomes = []
            for args, kwargs in calls:
                try:
                    outcomes.append(("ok", self.spec.func(*args, **kwargs)))
                except Exception as error:
                    outcomes.append(("error", f"{type(error).__name__}: {error}"))
        scores: list[float | None] = []
        reasons: list[str | None] = []
        first_error = None
        for status, value in outcomes:
            if status == "ok":
                try:
                    unscored = value if isinstance(value, Unscored) else None  # counted by its reason, as in a batch
                    score = _as_score(value.score if unscored else value)
                    scores.append(score)
                    reasons.append(unscored.reason if unscored else "unscorable" if score is None else None)
                    continue
                except (TypeError, ValueError) as error:
                    status, value = "error", str(error)
            scores.append(None)
            reasons.append(status)
            if status == "error":
                first_error = first_error or value
        if n and reasons.count("error") == n:
            self._fail(first_error, texts, columns)
        return scores, reasons

    def _score_batch(self, call, n, trl_arguments=None):
        texts, columns = call[0], call[1]
        args, kwargs = call_arguments(self.spec, self.params, *call[:4], log_metric=call[4])
        if getattr(self.spec, "trl_call", False):  # TRL's own arguments too, where the function reads them
            accepted, takes_all = _accepts(self.spec.func)
            kwargs.update({key: value for key, value in (trl_arguments or {}).items() if takes_all or key in accepted})
        try:
            values = self.spec.func(*args, **kwargs)
            values = list(run_coroutine(values) if inspect.isawaitable(values) else values)
            if len(values) == n and all(type(v) is float for v in values) and math.isfinite(sum(values)):
                return values, [None] * n  # plain finite floats (a finite sum means no nan or inf): nothing to convert
            reasons = [v.reason if isinstance(v, Unscored) else None for v in values]
            scores = [_as_score(v.score if isinstance(v, Unscored) else v) for v in values]
        except RewardError:  # the plugin's own sentence (a judge server gone), not a failure of every item
            raise
        except Exception as error:
            self._fail(f"{type(error).__name__}: {error}", texts, columns)
        if len(scores) != n:
            self._fail(f"returned {len(scores)} scores for {n} completions", texts, columns)
        reasons = [reason or ("unscorable" if score is None else None) for reason, score in zip(reasons, scores)]
        return scores, reasons

    def _fail(self, error: str, texts: list[str], columns: dict) -> None:
        sample = {"completion": texts[0] if texts else None}
        sample.update({name: values[0] for name, values in columns.items() if values})
        raise RewardError(
            f"reward '{self.spec.name}' (from {self.spec.distribution or 'an unknown distribution'}) failed on "
            f"every completion of a batch of {len(texts)}: {error}. Parameters: {self.params}. "
            f"First input: {_shorten(sample)}"
        )


class ConcurrentReward(Reward):
    """A reward that waits (on worker processes, a sandbox, a server): TRL awaits it, so the rewards of one step
    are scored at the same time, each in its own thread, and the step takes about as long as the slowest."""

    async def __call__(self, prompts=None, completions=None, completion_ids=None, **kwargs) -> list[float | None]:
        return await asyncio.to_thread(self.score, prompts, completions, completion_ids, **kwargs)


def waits(spec) -> bool:
    """A reward that spends its time waiting: on the worker pool (it has a per-item limit) or on I/O (async)."""
    return spec.timeout is not None or _is_async(spec.func)


def _is_async(func) -> bool:
    """An ``async def`` function, or a callable object whose ``__call__`` is one; a ``"module:function"`` string
    (LazyCallable) is looked through to the function it names."""
    func = getattr(func, "__wrapped__", func)
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(getattr(func, "__call__", None))


def run_coroutine(coroutine):
    """Run ``coroutine`` to its end from synchronous code, even in a thread whose event loop is running (Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


async def _gather_items(func, calls: list, timeout: float | None) -> list[tuple[str, Any]]:
    """An async per-item function on every item at once; ``timeout`` (seconds) cancels an item still waiting."""
    async def one(args, kwargs):
        try:
            return "ok", await asyncio.wait_for(func(*args, **kwargs), timeout)
        except asyncio.TimeoutError:
            return "timeout", None
        except Exception as error:
            return "error", f"{type(error).__name__}: {error}"

    return list(await asyncio.gather(*(one(args, kwargs) for args, kwargs in calls)))


_TRL_KWARGS = {"trainer_state", "log_extra", "log_metric", "environments"}


def item_timeout(spec, params: dict) -> float | None:
    """The hard per-item limit a reward runs under: its ``timeout`` parameter if it has one, else the spec's."""
    if spec.timeout is None:
        return None
    if any(p.name == "timeout" for p in spec.params) and params.get("timeout") is not None:
        return float(params["timeout"])
    return float(spec.timeout)


def _process_count() -> int:
    """Training processes (torch.distributed world size); 1 outside distributed training."""
    dist = sys.modules.get("torch.distributed")
    try:
        return dist.get_world_size() if dist is not None and dist.is_available() and dist.is_initialized() else 1
    except Exception:
        return 1


def _as_score(value: Any) -> float | None:
    if value is None:
        return None
    if not isinstance(value, (int, float)) and not hasattr(value, "__float__"):  # bools count, as TRL counts them
        raise TypeError(f"returned {value!r} ({type(value).__name__}), expected a float or None")
    score = float(value)
    if not math.isfinite(score):
        raise ValueError(f"returned a non-finite score {score}")
    return score


def _shorten(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"
