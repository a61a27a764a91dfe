"""Running one program as a script in the code reward's sandbox, for other plugins: ``run_program`` (what it printed,
its standard error and exit status) and ``sandbox_problem`` (whether a sandbox works on this machine).

Public through ``grpo_reward_code``; the ``python`` environment (grpo-env-python) runs the model's code with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from grpo_reward_code.sandbox import SANDBOXES, Limits, probe, run_job

STATUSES = ("ok", "error", "timeout", "output", "sandbox")


@dataclass(frozen=True)
class ProgramRun:
    """How one program ran: ``status`` is ``ok`` (it ended with exit status 0), ``error`` (another exit status: an
    exception it did not catch, whose traceback is in ``stderr``, or ``sys.exit(n)``), ``timeout`` (stopped at the
    time limit), ``output`` (stopped when its output passed the cap) or ``sandbox`` (the sandbox itself failed to
    start; ``detail`` says why). ``stdout`` and ``stderr`` hold what it printed before it ended or was stopped;
    ``exit_code`` is None when it was stopped, negative for a signal the program got for another reason.

    ``limit`` names the sandbox limit that stopped the program, or raised the exception it did not catch: ``time``
    (the wall clock; status ``timeout``), ``cpu`` (its CPU time, threads together; status ``timeout``),
    ``output`` (status ``output``), ``memory``, ``file_size``, ``processes`` or ``open_files`` (status
    ``error``); None otherwise. ``limit_note`` says it in words a model can act on ("" without a limit)."""

    status: str
    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    seconds: float = 0.0
    detail: str = ""
    limit: str | None = None
    limit_note: str = ""


def limit_note(limit: str | None, limits: Limits) -> str:
    """What reaching ``limit`` means, in words for the program's author: "" for None."""
    notes = {
        "time": f"stopped: the program ran past its {limits.timeout:g} s limit",
        "cpu": f"stopped: the program used more than its {limits.cpu} s of CPU time (all its threads together)",
        "output": f"stopped: the program printed more than {limits.output_kb} KiB",
        "memory": f"the program ran out of memory: it may use {limits.memory_mb} MB",
        "file_size": f"the program wrote past the file size limit: a file may hold {limits.file_size_mb} MB",
        "processes": f"the program could not start another process: it may have {limits.processes} at once",
        "open_files": f"the program could not open another file: it may have {limits.open_files} open at once",
    }
    return notes.get(limit, "")


def run_program(code: str, stdin: str = "", *, seconds: float = 10.0, memory_mb: int = 1024, file_size_mb: int = 16,
                processes: int = 32, open_files: int = 64, output_kb: int = 1024,
                sandbox: str = "bubblewrap") -> ProgramRun:
    """Run ``code`` as a Python script reading ``stdin``, in a fresh sandbox, under the limits the ``code`` reward
    takes (the same parameters; ``seconds`` is its ``timeout``): no network, the standard library only, an empty
    temporary folder as the only writable place, ``output_kb`` of output (standard output and error together).

    Never raises for what the program does; raises ValueError for arguments it cannot run with. It runs in this
    process: put it under ``grpo_core.run_with_timeouts`` to run it on the run's scoring backend.
    """
    if not isinstance(code, str) or not isinstance(stdin, str):
        raise ValueError(f"run_program takes the program and its input as text, got {type(code).__name__} and "
                         f"{type(stdin).__name__}")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
            or seconds <= 0:
        raise ValueError(f"seconds must be a positive, finite number, got {seconds!r}")
    if sandbox not in SANDBOXES:
        raise ValueError(f"sandbox must be one of {', '.join(SANDBOXES)}, got {sandbox!r}")
    limits = Limits(timeout=float(seconds), memory_mb=memory_mb, file_size_mb=file_size_mb, processes=processes,
                    open_files=open_files, output_kb=output_kb)
    outcome = run_job({"program": code, "mode": "run", "tests": [stdin]}, limits, sandbox)
    record = outcome.records.get(0)
    if record is None:
        if outcome.status == "timeout":  # the sandbox gave no answer at all before its grace ran out
            return ProgramRun("timeout", seconds=outcome.seconds, limit="time",
                              limit_note=limit_note("time", limits))
        return ProgramRun("sandbox", seconds=outcome.seconds, detail=outcome.detail or "the sandbox gave no result")
    limit = record.get("limit")
    return ProgramRun(record["status"], record.get("out") or "", record.get("err") or "", record.get("exit"),
                      outcome.seconds, limit=limit, limit_note=limit_note(limit, limits))


def sandbox_problem(sandbox: str = "bubblewrap") -> str | None:
    """None when ``sandbox`` (``bubblewrap`` or ``none``) can run programs on this machine, else a sentence saying
    what is missing. Checked once per process."""
    if sandbox not in SANDBOXES:
        return f"sandbox must be one of {', '.join(SANDBOXES)}, got {sandbox!r}"
    return probe(sandbox)
