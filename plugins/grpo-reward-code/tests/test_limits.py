"""Each of the sandbox's own limits, reached on purpose, is reported as that limit: in ``run_program``'s result, in
the job's records (the code reward's per-item record) and, through ``limit_note``, in words; a signal the program
sends itself stays a signal. Which limit fires never depends on the machine: a program on one thread always meets
the wall clock first (the CPU limit is a second above it), idle or beside busy processes, however often it runs."""

import os
import subprocess
import sys

import pytest

from grpo_reward_code import run_program
from grpo_reward_code.reward import score_one
from grpo_reward_code.programs import read_tests
from grpo_reward_code.runner import limit_note
from grpo_reward_code.sandbox import Limits, run_job

from grpo_core import Unscored

BUSY_LOOP = "print('started', flush=True)\nwhile True:\n    pass"
SLEEP = "import time\ntime.sleep(3600)"
READ_THEN_LOOP = "import os\nos.read(0, 1)\nwhile 1: pass"


@pytest.fixture(autouse=True)
def _isolated(isolated):
    """Every test here needs the sandbox."""


@pytest.fixture(params=["idle", "busy"])
def load(request):
    """The machine idle, or with a busy process on every core beside the test (as on a loaded CI runner)."""
    busy = []
    if request.param == "busy":
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    yield request.param
    for process in busy:
        process.kill()
        process.wait()


def test_a_hanging_program_meets_the_wall_clock_every_time(load):
    """The hanging cases, many times each: always the wall clock, never the CPU limit or a signal. The busy loop
    runs at a whole second, where a CPU limit equal to the wall clock's raced it. The race is the busy loop's on the
    idle machine, where it gets a whole core: twenty times there. A sleeping or blocked program uses no CPU time,
    and beside busy processes the loop gets less CPU time than wall time, so the CPU limit a second above the wall
    clock cannot come first: five times each show the wall clock fires on time (the busy processes take both cores
    from the rest of the suite)."""
    for index in range(20):
        for code, seconds in ((BUSY_LOOP, 1), (SLEEP, 0.3), (READ_THEN_LOOP, 0.3)):
            if index >= 5 and (load == "busy" or code is not BUSY_LOOP):
                continue
            run = run_program(code, seconds=seconds)
            assert (run.status, run.limit, run.exit_code) == ("timeout", "time", None), (code, run)
            assert run.limit_note == f"stopped: the program ran past its {seconds:g} s limit"


def test_the_cpu_limit_is_named_when_it_ends_the_program(load):
    """With the CPU limit under the wall clock's, a busy loop meets it: SIGXCPU at the soft limit, or SIGKILL a second
    later for a program that ignores SIGXCPU; both are the CPU limit, not a signal."""
    limits = Limits(timeout=30, cpu_seconds=1)
    for code in (BUSY_LOOP, "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass"):
        outcome = run_job({"program": code, "mode": "run", "tests": [""]}, limits)
        record = outcome.records[0]
        assert (record["status"], record["limit"], record["exit"]) == ("timeout", "cpu", None), record
        assert (outcome.status, outcome.limit) == ("timeout", "cpu")
        assert outcome.seconds < 25
    assert limit_note("cpu", limits) == "stopped: the program used more than its 1 s of CPU time (all its threads together)"


def test_the_cpu_limit_in_io_and_assert_jobs_reaches_the_code_rewards_record():
    limits = Limits(timeout=30, cpu_seconds=1)
    io = run_job({"program": "while True:\n    pass", "mode": "io", "tests": ["1\n", "2\n"]}, limits)
    assert (io.status, io.limit, io.records[0]["status"]) == ("timeout", "cpu", "timeout") and 1 not in io.records
    for program in ("def f(x):\n    while True:\n        pass", "while True:\n    pass"):  # in a call; at start
        tests = read_tests(["assert f(1) == 2", "assert f(2) == 4"])
        result = score_one(program, tests, limits, "bubblewrap", False)
        assert isinstance(result, Unscored) and result.reason == "timeout", result
        assert result.detail == "the program used more than its 1 s of CPU time (all its threads together)"
    wall = score_one("def f(x):\n    while True:\n        pass", read_tests(["assert f(1) == 2"]), Limits(timeout=1),
                     "bubblewrap", False)
    assert isinstance(wall, Unscored) and wall.detail == "the program ran past its 1 s limit"


@pytest.mark.parametrize("code, limit, note", [
    ("x = bytearray(50 * 1024 ** 3)", "memory", "the program ran out of memory: it may use 256 MB"),
    ("with open('big', 'wb') as f:\n    f.write(b'x' * 3 * 1024 ** 2)", "file_size",
     "the program wrote past the file size limit: a file may hold 1 MB"),
    ("import os, time\nfor _ in range(100):\n    if os.fork() == 0:\n        time.sleep(30)\n        os._exit(0)",
     "processes", "the program could not start another process: it may have 8 at once"),
    ("files = [open('/dev/null') for _ in range(1000)]", "open_files",
     "the program could not open another file: it may have 16 open at once"),
])
def test_a_limit_behind_an_uncaught_error_is_named(code, limit, note):
    run = run_program(code, seconds=10, memory_mb=256, file_size_mb=1, processes=8, open_files=16)
    assert (run.status, run.exit_code, run.limit, run.limit_note) == ("error", 1, limit, note), run
    assert "Traceback" in run.stderr


@pytest.mark.parametrize("code", [
    "import errno\nraise OSError(errno.EPERM, 'no')",
    "try:\n    x = bytearray(50 * 1024 ** 3)\nexcept MemoryError:\n    print('caught')",
    "import os, errno\nraise BlockingIOError(errno.EAGAIN, 'try again')",  # EAGAIN while forking still works
])
def test_an_error_no_limit_raised_names_no_limit(code):
    run = run_program(code, seconds=10, memory_mb=256)
    assert run.limit is None and run.limit_note == "", run


@pytest.mark.parametrize("name, number", [("SIGXCPU", 24), ("SIGKILL", 9), ("SIGTERM", 15)])
def test_a_signal_the_program_sends_itself_stays_a_signal(name, number):
    run = run_program(f"import os, signal\nos.kill(os.getpid(), signal.{name})", seconds=5)
    assert (run.status, run.exit_code, run.limit) == ("error", -number, None), run


def test_the_cpu_limit_is_a_second_above_the_wall_clock_unless_set():
    assert [Limits(timeout=t).cpu for t in (0.3, 1, 1.5, 10)] == [2, 2, 3, 11]
    assert Limits(timeout=10, cpu_seconds=1).cpu == 1
