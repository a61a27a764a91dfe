"""Module-level reward functions for the adapter tests (a timeout needs picklable functions)."""

import time


def count_a(completion, answer=None, strict=False):
    if "boom" in completion:
        raise ValueError("boom in the completion")
    if strict and answer is None:
        return None
    return completion.count("a") / max(len(completion), 1)


def sleepy(completion):
    if completion.startswith("hang"):
        time.sleep(60)
    return 1.0


def always_fails(completion):
    raise KeyError("missing key")


def token_count(completion, completion_ids=None):
    return float(len(completion_ids))


def batch_len(completions, answer):
    return [float(len(c) == len(a)) for c, a in zip(completions, answer)]


def _record(path, entry):
    import json

    with open(path, "a") as handle:
        handle.write(json.dumps(entry, sort_keys=True) + "\n")


def record_named(completion, answer, *, path, scale=1.0, prompt=None, completion_ids=None):
    """Writes the call it received to ``path``; takes its parameters by name."""
    _record(path, {"completion": completion, "answer": answer, "scale": scale, "prompt": prompt,
                   "completion_ids": completion_ids})
    return 0.5


def record_kwargs(completion, **kwargs):
    """Writes the call it received to ``path``; takes everything through **kwargs."""
    _record(kwargs["path"], {"completion": completion, **kwargs})
    return 0.5


def odd_length_raises(completion, answer):
    """A third-party reward that raises ValueError on some input (and takes no answer_column)."""
    if len(completion) % 2:
        raise ValueError(f"cannot grade an odd-length answer of {len(completion)} characters")
    return 0.5


def never_scores(completion, answer=None):
    return None


def none_for_worse(completion):
    return None if completion == "worse" else 1.0


def spin(seconds):
    """Busy for ``seconds`` of CPU time (a sleep would not show a stuck core)."""
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return seconds


def echo(value, delay=0.0):
    import time

    time.sleep(delay)
    return value


def by_answer(completion, answer):
    """Raises, hangs or gives no score as the row's answer says; else 1.0."""
    if answer == "raise":
        raise ValueError("asked to raise")
    if answer == "hang":
        time.sleep(60)
    if answer == "none":
        return None
    return 1.0


def timed(completion, *, path, name, seconds=0.05):
    """Notes when it ran (start and end, in this machine's wall clock) under ``name``; scores 1.0."""
    start = time.time()
    time.sleep(seconds)
    _record(path, {"name": name, "start": start, "end": time.time()})
    return 1.0


def note_pid(path):
    """Writes this process's id to ``path`` (one line per call)."""
    import os

    with open(path, "a") as handle:
        handle.write(f"{os.getpid()}\n")


async def waits_async(completion, delay=0.0):
    """An async per-item reward: waits ``delay`` seconds (cancellable), raises on 'boom', scores the length."""
    import asyncio

    await asyncio.sleep(delay)
    if "boom" in completion:
        raise ValueError("boom in the completion")
    return float(len(completion))


def die(code=1):
    """Ends its worker process at once, as a crash in native code would."""
    import os

    os._exit(code)


def unscored_by_text(completion):
    """A per-item reward that says why it cannot score: 'slow' timed out (scored 0.0), 'odd' is unscorable."""
    from grpo_core import Unscored

    if completion == "slow":
        return Unscored("timeout", "the checker took too long", score=0.0)
    if completion == "odd":
        return Unscored("unscorable", "cannot be judged")
    return 1.0
