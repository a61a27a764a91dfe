"""One judge request: an OpenAI-compatible ``/v1/chat/completions`` call with retries and an on-disk cache.

HTTP goes through the standard library's urllib, run in threads: nothing else is needed for one JSON POST, and
grpo-core's ``remote`` reward does the same. ``STATS`` counts what happened in this process (requests, cache
hits, retries), for the tests, the benchmark and ``grpo-run judge-server``.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
from collections import Counter
from pathlib import Path

STATS: Counter = Counter()
_STATS_LOCK = threading.Lock()
RETRIED_STATUS = {429, 500, 502, 503, 504}


class Failed(Exception):
    """A request that failed after its retries: ``reason`` is "timeout" or "error"; ``unreachable`` when no
    connection could be made at all."""

    def __init__(self, reason: str, detail: str, unreachable: bool = False, retry: bool = True) -> None:
        super().__init__(detail)
        self.reason = reason
        self.unreachable = unreachable
        self.retry = retry


def count(key: str, n: int = 1) -> None:
    with _STATS_LOCK:
        STATS[key] += n


def cache_dir() -> Path:
    """Where verdicts are kept: ``judge/`` in grpo-core's cache (``GRPO_CACHE_DIR`` overrides, as for models)."""
    root = os.environ.get("GRPO_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "grpo-core")
    return Path(root) / "judge"


def cache_key(endpoint: str, model: str, rubric: str, filled: str, temperature: float, max_tokens: int) -> str:
    raw = json.dumps([endpoint, model, rubric, filled, temperature, max_tokens], ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()  # a completion may hold lone surrogates


def cached(key: str) -> str | None:
    path = cache_dir() / key[:2] / f"{key}.json"
    try:
        return json.loads(path.read_text())["reply"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(key: str, reply: str) -> None:
    folder = cache_dir() / key[:2]
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{key}.{os.getpid()}.{threading.get_ident()}"
    tmp.write_text(json.dumps({"reply": reply}))
    os.replace(tmp, folder / f"{key}.json")  # atomic: a reader never sees half a verdict


def chat(base_url: str, model: str, message: str, *, api_key_env: str, temperature: float, max_tokens: int,
         timeout: float, retries: int, on_retry=None) -> str:
    """The judge's reply to ``message``; retried with backoff on no connection, a timeout, 429 and 5xx
    (``on_retry()`` is called before each retry), all within ``timeout`` seconds: the limit is the item's."""
    url = base_url.rstrip("/") + "/v1/chat/completions"
    # a lone surrogate is no text a server can tokenize (transformers serve answers 500 to it, every time): sent as "?"
    message = message.encode("utf-8", "replace").decode("utf-8")
    body = {"model": model, "messages": [{"role": "user", "content": message}],
            "temperature": temperature, "max_tokens": max_tokens}
    deadline = time.monotonic() + timeout
    for attempt in range(retries + 1):
        count("requests")
        try:
            answer = _post(url, body, api_key_env, max(0.001, deadline - time.monotonic()))
            return answer["choices"][0]["message"]["content"] or ""
        except Failed as failure:
            backoff = min(4.0, 0.1 * 2 ** attempt)
            if not failure.retry or attempt == retries:
                raise
            if time.monotonic() + backoff >= deadline:  # no time left to try again
                raise Failed("timeout", f"{url}: no verdict within {timeout:g} s, retries included (last: "
                                        f"{failure})") from None
            count("retries")
            if on_retry is not None:
                on_retry()
            time.sleep(backoff)
        except (KeyError, IndexError, TypeError) as error:
            raise Failed("error", f"{url} answered without choices[0].message.content ({error!r})") from None
    raise AssertionError("unreachable")


def _post(url: str, body: dict, api_key_env: str, timeout: float) -> dict:
    import urllib.error  # 60 ms of imports (http, email, ssl) that only a judge needs
    import urllib.request

    headers = {"Content-Type": "application/json"}
    key = os.environ.get(api_key_env) if api_key_env else None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        text = error.read().decode(errors="replace")[:300]
        if error.code in RETRIED_STATUS:
            raise Failed("error", f"{url} answered {error.code}: {text}") from None
        # a 4xx other than 429 will not change when tried again: one failure, counted
        raise Failed("error", f"{url} refused the request ({error.code}): {text}", retry=False) from None
    except (TimeoutError, socket.timeout) as error:
        raise Failed("timeout", f"{url} did not answer within {timeout:.3g} s ({error})") from None
    except urllib.error.URLError as error:
        if isinstance(error.reason, (TimeoutError, socket.timeout)):
            raise Failed("timeout", f"{url} did not answer within {timeout:.3g} s") from None
        raise Failed("error", f"cannot reach {url}: {error.reason}",
                     unreachable=isinstance(error.reason, ConnectionRefusedError)) from None
    except (OSError, ValueError) as error:  # a connection cut mid-answer, an answer that is not JSON
        raise Failed("error", f"{url}: {type(error).__name__}: {error}") from None
