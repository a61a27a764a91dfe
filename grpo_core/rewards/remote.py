"""The ``remote:NAME`` reward: reward NAME scored by a ``grpo-run serve`` server, so heavy rewards can live on
another machine.

    grpo-run --reward remote:math --reward-arg remote:math.url=http://10.0.0.5:8765

Its bounds and columns are the served reward's, read from the server's ``GET /rewards`` when the reward is loaded
(an unreachable server stops the run there, before a model loads). A batch is one ``POST /rewards/NAME``; a
connection error, a timeout or a 5xx answer is tried again with backoff, and a batch that still fails gives each
item Unscored("error") or Unscored("timeout"), counted like any other. HTTP goes through the standard library's
urllib, in a thread: grpo-core does not otherwise depend on an HTTP client.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

from grpo_core.errors import RewardError, UsageError
from grpo_core.rewards.unscored import Unscored
from grpo_core.settings.params import Param

DEFAULT_URL = "http://127.0.0.1:8765"
PARAMS = (
    Param("url", DEFAULT_URL, str, "the grpo-run serve server, http://HOST:PORT"),
    Param("timeout", 120.0, float, "seconds one request may take before it is tried again", minimum=0.001),
    Param("retries", 3, int, "tries after the first when the server cannot be reached or answers 5xx", minimum=0,
          maximum=100),
    Param("token_env", "GRPO_SERVE_TOKEN", str, "environment variable holding the server's bearer token (sent "
          "when set)"),
)
_OWN = {p.name for p in PARAMS}


class _Failed(Exception):
    """A request that may succeed when tried again (no connection, a timeout, a 5xx)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def _request(url: str, token_env: str, timeout: float, body: dict | None = None) -> Any:
    """GET (no body) or POST ``body`` as JSON; the decoded answer, a _Failed to retry, or a RewardError (4xx)."""
    import urllib.error  # 60 ms of imports (http, email, ssl) that only a remote reward needs
    import urllib.request

    headers = {"Content-Type": "application/json"}
    token = os.environ.get(token_env)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers, method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        text = error.read().decode(errors="replace")[:500]
        try:
            text = json.loads(text).get("error", text)
        except (ValueError, AttributeError):
            pass
        if error.code >= 500:
            raise _Failed("error", f"{url} answered {error.code}: {text}") from None
        raise RewardError(f"{url} refused the request ({error.code}): {text}") from None
    except (TimeoutError, socket.timeout) as error:
        raise _Failed("timeout", f"{url} did not answer within {timeout:g}s ({error})") from None
    except urllib.error.URLError as error:
        reason = "timeout" if isinstance(error.reason, (TimeoutError, socket.timeout)) else "error"
        raise _Failed(reason, f"cannot reach {url}: {error.reason}") from None
    except (OSError, ValueError) as error:  # a connection cut mid-answer, an answer that is not JSON
        raise _Failed("error", f"{url}: {type(error).__name__}: {error}") from None


def _post_with_retries(url: str, body: dict, params: dict) -> Any:
    for attempt in range(params["retries"] + 1):
        try:
            return _request(url, params["token_env"], params["timeout"], body)
        except _Failed:
            if attempt == params["retries"]:
                raise
            time.sleep(min(8.0, 0.25 * 2 ** attempt))


@dataclass(frozen=True)
class RemoteScorer:
    """The function of reward ``remote:NAME``: one POST of the whole batch to ``/rewards/NAME``."""

    served: str

    async def __call__(self, completions: list[str], prompts: list | None = None, **kwargs) -> list:
        params = {key: kwargs.pop(key) for key in _OWN}
        body = {"completions": completions, **({"prompts": prompts} if prompts is not None else {}), **kwargs}
        url = f"{params['url'].rstrip('/')}/rewards/{self.served}"
        try:
            answer = await asyncio.to_thread(_post_with_retries, url, body, params)
        except _Failed as failure:  # every try failed: each item is counted, none scored 0 in silence
            return [Unscored(failure.reason, str(failure))] * len(completions)
        scores, reasons = answer.get("scores"), answer.get("unscored") or [None] * len(completions)
        if not isinstance(scores, list) or len(scores) != len(completions):
            raise RewardError(f"{url} answered {answer!r:.200} for {len(completions)} completions; is it a "
                              "grpo-run serve server?")
        return [Unscored(reason, score=score) if reason else score for score, reason in zip(scores, reasons)]


def fetch_entry(params: dict, served: str, name: str) -> dict:
    """The server's catalogue entry of reward ``served``; a UsageError (one line) when there is none to read."""
    url = f"{params['url'].rstrip('/')}/rewards"
    try:
        catalogue = _request(url, params["token_env"], min(params["timeout"], 30.0))
    except (_Failed, RewardError) as error:
        raise UsageError(f"reward '{name}': {error}; start it with grpo-run serve --reward {served}, or give its "
                         f"address with --reward-arg {name}.url=http://HOST:PORT") from None
    entries = {entry.get("name"): entry for entry in (catalogue or {}).get("rewards", [])} \
        if isinstance(catalogue, dict) else {}
    if served not in entries:
        raise UsageError(f"reward '{name}': the server at {params['url']} does not serve '{served}'; it serves "
                         f"{', '.join(sorted(map(str, entries))) or 'nothing'} (start it with --reward {served})")
    return entries[served]
