"""The ``code`` reward: run each completion's program against its row's tests in a sandbox, score the share passed."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

from grpo_core import Unscored, completion_text, run_with_timeouts

from grpo_reward_code.programs import extract_program, read_tests, same_output, same_value
from grpo_reward_code.runner import limit_note
from grpo_reward_code.sandbox import Limits, probe, run_job

OUTER_GRACE_S = 10.0  # beyond a program's own limit, for the sandbox to start and report, before its worker is killed
_warned = set()  # what validate_params has warned about in this process (sandbox=none: once)


def passed(tests, outcome) -> int:
    """How many tests passed, judged here from what came back (the expected values never left this process)."""
    count = 0
    for index, expected in enumerate(tests.expected):
        record = outcome.records.get(index) or {}
        if tests.mode == "io":
            count += record.get("status") == "ok" and same_output(record.get("out") or "", expected)
        elif expected is None:
            count += record.get("status") == "pass"
        else:
            count += record.get("status") == "value" and same_value(record.get("value") or "", expected[0])
    return count


def score_one(program, tests, limits: Limits, sandbox: str, strict: bool):
    if program is None:
        return 0.0
    job = {"program": program, "mode": tests.mode, "tests": list(tests.items)}
    outcome = run_job(job, limits, sandbox)
    if outcome.status == "error" and not outcome.records:
        return Unscored("error", f"the sandbox failed: {outcome.detail}")
    share = passed(tests, outcome) / len(tests.expected)
    if strict:
        share = float(share == 1.0)
    if outcome.status == "timeout":  # counted in rewards/code/timeouts, with the tests it passed before
        return Unscored("timeout", limit_note(outcome.limit or "time", limits).removeprefix("stopped: "),
                        score=share)
    return share


def code_reward(
    completions,
    tests,
    *,
    tests_column="tests",
    language="python",
    tag="",
    strict=False,
    timeout=10.0,
    memory_mb=1024,
    file_size_mb=16,
    processes=32,
    open_files=64,
    output_kb=1024,
    sandbox="bubblewrap",
    workers=0,
):
    """Score a batch: the share of its row's tests each completion's program passes (1.0 or 0.0 with ``strict``).

    0.0 without a program; ``Unscored("unscorable")`` (None for TRL) for a row without readable tests;
    a program that runs past ``timeout`` keeps what it passed before, counted as a timeout.
    """
    limits = Limits(timeout=float(timeout), memory_mb=memory_mb, file_size_mb=file_size_mb, processes=processes,
                    open_files=open_files, output_kb=output_kb)
    completions, rows = list(completions), list(tests)
    scores: list = [None] * len(completions)
    jobs = []
    parsed = {}
    for index, (completion, raw) in enumerate(zip(completions, rows)):
        key = raw if isinstance(raw, str) else repr(raw)
        if key not in parsed:
            parsed[key] = read_tests(raw)
        row_tests = parsed[key]
        if row_tests is None:
            scores[index] = Unscored("unscorable", "the row has no tests that can be read")
            continue
        program = extract_program(completion_text(completion), language, tag)
        if program is None:
            scores[index] = 0.0
            continue
        jobs.append((index, program, row_tests))
    calls = [((program, row_tests, limits, sandbox, strict), {}) for _, program, row_tests in jobs]
    results = []
    if calls and workers:  # a fixed number of programs at once, from threads of this process
        with ThreadPoolExecutor(max_workers=min(len(calls), workers)) as pool:
            results = list(pool.map(lambda call: score_one(*call[0]), calls))
    elif calls:  # the run's shared worker processes (every core, or a Ray cluster), each under an outer limit too
        results = run_with_timeouts(score_one, calls, limits.timeout + OUTER_GRACE_S)
    for (index, _, _), result in zip(jobs, results):
        scores[index] = result
    return scores


def validate_params(params: dict) -> None:
    """Raise ValueError for parameters ``code_reward`` cannot run with (no sandbox on this machine included); warn
    once a process when programs are to run without one."""
    if not params["tests_column"]:
        raise ValueError("tests_column must name the dataset column holding the tests, e.g. 'tests'")
    missing = probe(params["sandbox"])
    if missing:
        raise ValueError(f"{missing}; or set sandbox=none to run programs without isolation at your own risk")
    if params["sandbox"] == "none" and "none" not in _warned:
        _warned.add("none")
        print("warning: reward 'code' runs model-written programs with sandbox=none: no network, file system or "
              "process isolation, only resource limits and a clean environment", file=sys.stderr)
