"""run_program: one program run as a script in the sandbox, for other plugins (the python environment's tool). What it
printed, its traceback and exit status come back; the sandbox's limits hold as they do for the reward."""

import time

import pytest

from grpo_reward_code import ProgramRun, run_program, sandbox_problem


@pytest.fixture(autouse=True)
def _isolated(isolated):
    """Every test here needs the sandbox."""


def test_output_input_and_a_clean_exit():
    run = run_program("import sys\nname = sys.stdin.readline().strip()\nprint('hello', name)", "world\n", seconds=5)
    assert (run.status, run.stdout, run.stderr, run.exit_code) == ("ok", "hello world\n", "", 0)
    assert isinstance(run, ProgramRun) and 0 < run.seconds < 5


def test_an_exception_gives_its_traceback_of_the_programs_own_lines_after_what_it_printed():
    run = run_program("import sys\nprint('before')\nprint('note', file=sys.stderr)\ndef f(x):\n    return x[0]\nf([])",
                      seconds=5)
    assert run.status == "error" and run.exit_code == 1 and run.stdout == "before\n"
    assert run.stderr.startswith("note\nTraceback (most recent call last):\n")
    assert 'File "<code>", line 6, in <module>' in run.stderr and "return x[0]" in run.stderr
    assert run.stderr.rstrip().endswith("IndexError: list index out of range")
    assert "_worker" not in run.stderr and "<string>" not in run.stderr  # no frame of the sandbox's own


@pytest.mark.parametrize("code, status, exit_code, error", [
    ("import sys\nsys.exit(3)", "error", 3, ""),
    ("import sys\nsys.exit(0)", "ok", 0, ""),
    ("raise SystemExit('bye')", "error", 1, "bye\n"),
    ("print(1", "error", 1, "SyntaxError"),
    ("x = bytearray(50 * 1024 ** 3)", "error", 1, "MemoryError"),
    ("def f():\n    f()\nf()", "error", 1, "RecursionError"),
    ("a\x00b", "error", 1, "null bytes"),
    ("\ud800", "error", 1, "surrogates not allowed"),
])
def test_how_a_program_ends(code, status, exit_code, error):
    run = run_program(code, seconds=5, memory_mb=256)
    assert (run.status, run.exit_code) == (status, exit_code), run
    assert error in run.stderr


def test_a_hanging_program_is_stopped_at_the_limit_with_what_it_printed():
    start = time.monotonic()
    run = run_program("print('started', flush=True)\nwhile True:\n    pass", seconds=1)
    assert run.status == "timeout" and run.exit_code is None and run.stdout == "started\n"
    assert 1 <= time.monotonic() - start < 4


def test_output_past_the_cap_is_cut_and_the_program_stopped():
    start = time.monotonic()
    run = run_program("import sys\nwhile True:\n    sys.stderr.write('x' * 65536)", seconds=5, output_kb=64)
    assert run.status == "output" and len(run.stdout) + len(run.stderr) <= 64 * 1024
    assert time.monotonic() - start < 2


def test_arguments_it_cannot_run_with_are_a_value_error():
    for bad in ({"code": None}, {"code": "print(1)", "stdin": 3}, {"code": "print(1)", "seconds": float("nan")},
                {"code": "print(1)", "seconds": 0}, {"code": "print(1)", "sandbox": "docker"}):
        with pytest.raises(ValueError):
            run_program(**bad)
    assert sandbox_problem("bubblewrap") is None and sandbox_problem("none") is None
    assert "sandbox must be one of" in sandbox_problem("docker")
