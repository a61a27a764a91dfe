"""The ``python`` environment: one tool, ``run_python``, that runs the model's code in the ``code`` reward's sandbox
and shows what it printed. ``gold_episode`` gives the call of a right episode on a row with a reference solution.

Each call runs as one item of the run's scoring backend (``grpo_core.run_with_timeouts``: the local worker pool, or
Ray tasks with ``--reward-backend ray``), so the sandboxes of many episodes spread over every core or node, and a
call that hangs is killed there, never in the trainer. The episode keeps nothing of its row: the code cannot reach
the row's tests or answer, whatever it runs.

A tool call never raises: an argument that is not a program (None, a list, a number, text too long), a program
that fails, hangs or prints without end, a sandbox that fails and a call past the budget are each answered with
text the model reads.
"""

from __future__ import annotations

import math
import re
import sys

from grpo_core import Unscored, run_with_timeouts
from grpo_reward_code import ProgramRun, run_program, sandbox_problem

MAX_CODE = 100_000  # characters: a longer program is refused unread (as the code reward refuses one)
OUTPUT_KB = 64  # output read from a program before it is stopped; the model is shown max_output characters of it
OUTER_GRACE_S = 5.0  # past the program's own limit, for the sandbox to start and report, before its worker is killed
NO_OUTPUT = "(no output; print what you want to see)"
_EXAMPLE = re.compile(r"For example, `([^`\n]+)` returns")  # a code-tasks prompt's example call
_warned: set = set()  # what this process has warned about (sandbox=none: once)


class PythonSandbox:
    """Runs the model's Python programs in a sandbox, as a tool; one instance per episode."""

    def __init__(self, max_calls: int = 8, seconds: float = 3.0, max_output: int = 1000, memory_mb: int = 512,
                 sandbox: str = "bubblewrap"):
        _check_count("max_calls", max_calls, 1)
        _check_count("max_output", max_output, 100)
        _check_count("memory_mb", memory_mb, 64)
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
                or not 0 < seconds <= 600:
            raise ValueError(f"seconds must be a number of seconds above 0 and at most 600, got {seconds!r}")
        problem = sandbox_problem(sandbox)
        if problem:
            raise ValueError(f"{problem}; or set sandbox=none to run the model's code without isolation at your "
                             "own risk")
        if sandbox == "none" and "none" not in _warned:
            _warned.add("none")
            print("warning: environment 'python' runs model-written code with sandbox=none: no network, file system or "
                  "process isolation, only resource limits and a clean environment", file=sys.stderr)
        self.max_calls, self.seconds, self.max_output = max_calls, float(seconds), max_output
        self.memory_mb, self.sandbox = memory_mb, sandbox
        self.calls = 0

    def reset(self, **row) -> None:
        """Start an episode. Nothing of the row is kept: the code runs where the row's tests cannot be reached."""
        self.calls = 0

    def run_python(self, code: str) -> str:
        """Run a Python program in a sandbox and see what it prints.

        Each call starts a fresh interpreter with the standard library only, no network and an empty temporary
        folder; nothing is kept from one call to the next. It runs a few seconds at most.

        Args:
            code: the complete Python program to run; print the values you want to see

        Returns:
            What the program printed, then any error it raised (its traceback), cut short when long; and how it
            ended when it did not end normally.
        """
        self.calls += 1
        if self.calls > self.max_calls:
            return f"error: no calls left in this episode (it allows {self.max_calls}); give your answer"
        refused = _refusal(code)
        if refused:
            return refused
        limits = {"seconds": self.seconds, "memory_mb": self.memory_mb, "output_kb": OUTPUT_KB,
                  "sandbox": self.sandbox}
        (result,) = run_with_timeouts(run_program, [((code,), limits)], self.seconds + OUTER_GRACE_S)
        return shown(result, self.max_output, self.seconds)


def _check_count(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be a whole number of at least {low}, got {value!r}")


def _refusal(code) -> str:
    """Why ``code`` is not run (an error message), or "" when it is a program to run."""
    if not isinstance(code, str):
        kind = "nothing (null)" if code is None else f"a {type(code).__name__}"
        return f"error: code must be the program's text, a string; got {kind}"
    if not code.strip():
        return "error: no code given; write a complete Python program that prints what you want to see"
    if len(code) > MAX_CODE:
        return f"error: the code is {len(code)} characters long; a program may have at most {MAX_CODE}"
    return ""


def shown(result, max_output: int, seconds: float) -> str:
    """What the model reads of a run: its output and then its standard error (the traceback), the middle cut out
    when longer than ``max_output`` characters, then a line on how it ended when it did not exit with status 0.
    ``result`` is a ``ProgramRun``, or the ``Unscored`` of a call the backend stopped or could not run."""
    if isinstance(result, Unscored):
        if result.reason == "timeout":
            return f"error: the program gave no answer within {seconds + OUTER_GRACE_S:g} s and was stopped"
        return f"error: the program could not be run: {_line(result.detail)}"
    if not isinstance(result, ProgramRun):
        return f"error: the program could not be run: the sandbox returned {type(result).__name__}"
    if result.status == "sandbox":
        return f"error: the sandbox failed to start: {_line(result.detail)}"
    text = result.stdout
    if result.stderr:
        text += ("" if not text or text.endswith("\n") else "\n") + result.stderr
    text = clip(text.rstrip("\n"), max_output)
    ending = f"[{result.limit_note}]" if result.limit_note else ""
    code = result.exit_code
    if not ending and result.status == "error" and code is not None and (code != 1 or not result.stderr):
        ending = f"[exit status {code}]" if code >= 0 else f"[killed by signal {-code}]"  # not a traceback's 1
    if ending:
        return f"{text}\n{ending}" if text else ending
    return text or NO_OUTPUT


def clip(text: str, limit: int) -> str:
    """``text`` if at most ``limit`` characters, else its start and its end (where a traceback's error is) around
    a line that says how much was cut."""
    if len(text) <= limit:
        return text
    head, tail = limit // 2, limit - limit // 2
    return f"{text[:head]}\n... ({len(text) - head - tail} characters cut) ...\n{text[-tail:]}"


def _line(detail) -> str:
    lines = str(detail or "no reason given").strip().splitlines()
    return clip(lines[0] if lines else "no reason given", 200)


def gold_episode(row: dict) -> list[tuple[str, dict]]:
    """The call of a right episode on a row with a reference ``solution`` (``code-tasks`` rows): run the solution and
    print what it gives for the prompt's example call. A row without a solution (``code-hub``, a math dataset) has no
    known right program: no call."""
    solution = row.get("solution")
    if not isinstance(solution, str) or not solution.strip():
        return []
    prompt = row.get("prompt")
    text = prompt if isinstance(prompt, str) else "\n".join(
        str(m.get("content", "")) for m in prompt or [] if isinstance(m, dict))
    found = _EXAMPLE.search(text)
    code = solution.rstrip("\n") + (f"\n\nprint(repr({found.group(1)}))\n" if found else "\n")
    return [("run_python", {"code": code})]
