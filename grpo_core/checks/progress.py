"""Where a long check is: one line on a terminal, rewritten each second, or a plain line per property elsewhere.

Quiet until the check has run a while (``after_s``: 5 s on a terminal, 30 s for plain lines, so a quick check, and a
log that records it, has only its report), or until a reward is timed too slow to check in full. Written to stderr, so ``--json`` on stdout stays one document.
"""

from __future__ import annotations

import sys
import threading
import time

PLAIN_REPEAT_S = 30.0  # a plain line again for a property still running after this long
TERMINAL_AFTER_S, PLAIN_AFTER_S = 5.0, 30.0


class Quiet:
    """No progress shown: what the checks use when nobody waits on a terminal (tests, preflight)."""

    def stage(self, reward: str, what: str, examples: int = 0) -> None:
        pass

    def example(self, done: int) -> None:
        pass

    def slow(self) -> None:
        """A reward was timed too slow to check in full: show where the check is from now on."""

    def close(self) -> None:
        pass


class Progress(Quiet):
    """Which reward and property the check is on and how many of its examples ran, with the time spent."""

    def __init__(self, stream=None, after_s: float | None = None, interval_s: float = 1.0,
                 budget_s: float | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        if after_s is None:
            after_s = TERMINAL_AFTER_S if self.terminal else PLAIN_AFTER_S
        self.after_s, self.interval_s, self.budget_s = after_s, interval_s, budget_s
        self.started = time.monotonic()
        self._state = ("", "", 0, 0)  # reward, what, examples planned, examples done
        self._printed: tuple = ()
        self._printed_at = 0.0
        self._width = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="grpo-check-progress", daemon=True)
        self._thread.start()

    def stage(self, reward: str, what: str, examples: int = 0) -> None:
        with self._lock:
            self._state = (reward, what, examples, 0)

    def example(self, done: int) -> None:
        with self._lock:
            self._state = self._state[:3] + (done,)

    def slow(self) -> None:
        with self._lock:
            self.after_s = min(self.after_s, time.monotonic() - self.started)

    def line(self) -> str:
        reward, what, examples, done = self._state
        elapsed = time.monotonic() - self.started
        far = f", example {min(done + 1, examples)} of {examples}" if examples else ""
        budget = f" (budget about {self.budget_s:g} s a reward)" if self.budget_s else ""
        return f"checking {reward}: {what}{far}, {elapsed:.0f} s{budget}"

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._show()

    def _show(self) -> None:
        with self._lock:
            if not self._state[0] or time.monotonic() - self.started < self.after_s:
                return
            now = time.monotonic()
            if self.terminal:
                text = self.line()
                self._write("\r" + text.ljust(self._width))
                self._width = len(text)
            elif self._state[:2] != self._printed or now - self._printed_at >= PLAIN_REPEAT_S:
                self._write(self.line() + "\n")
                self._printed, self._printed_at = self._state[:2], now

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed pipe: the check goes on without its progress
            self._stop.set()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2 * self.interval_s)
        with self._lock:
            if self.terminal and self._width:
                self._write("\r" + " " * self._width + "\r")
                self._width = 0
