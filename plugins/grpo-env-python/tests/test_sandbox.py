"""Where the model's code runs, and what it cannot do there: each call is an item of the run's worker pool (another
process), or a Ray task with --reward-backend ray, stopped at its limit; hostile programs leave the trainer running
and nothing behind; the row's hidden tests cannot be reached from the code, by any of the ways a program could look
for them."""

import os
import threading
import time
from pathlib import Path

import pytest

from grpo_core import configure_scoring

from grpo_env_python import PythonSandbox
from grpo_env_python.environment import OUTER_GRACE_S

SECRET = "assert hidden_secret_7f3a9c(2) == 4"  # a hidden test, planted wherever a program might look
WORKER_MARK = "runs inside the sandbox"  # in the command line of every sandbox process (the code reward's worker)
POOL_WORKER = "grpo_core.rewards._worker"  # the command line of a worker of grpo-core's local pool


@pytest.fixture(autouse=True)
def _isolated(isolated):
    """Every test here needs the sandbox."""


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def parent_of(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))


def sandbox_processes() -> list[int]:
    """Every sandbox process on the machine, whoever started it."""
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and WORKER_MARK in command_line(int(p.name))]


def descends_from_this_process(pid: int) -> bool:
    """Whether ``pid`` is a descendant of this process: a sandbox this test started, through this process's pool or
    the Ray cluster it started, not another test process's (make test runs two side by side)."""
    while pid > 1:
        pid = parent_of(pid)
        if pid == os.getpid():
            return True
    return False


def launchers_while(sandbox: PythonSandbox, code: str) -> tuple[str, set[int]]:
    """Run ``code`` (which should take a second or more) and meanwhile find the processes that started a sandbox:
    the parent of each sandbox process (of this process's) whose own parent is not one. Returns the tool's answer and
    those pids."""
    answer, launchers = [], set()
    call = threading.Thread(target=lambda: answer.append(sandbox.run_python(code=code)))
    call.start()
    while call.is_alive():
        for pid in filter(descends_from_this_process, sandbox_processes()):
            parent = parent_of(pid)
            if parent and WORKER_MARK not in command_line(parent):
                launchers.add(parent)
        time.sleep(0.02)
    call.join()
    return answer[0], launchers


def test_each_call_runs_in_a_worker_of_the_runs_pool_not_in_the_trainer():
    sandbox = PythonSandbox(seconds=20)  # a 1.5 s sleep, with room for a loaded machine's start-up
    sandbox.reset()
    answer, launchers = launchers_while(sandbox, "import time\ntime.sleep(1.5)\nprint('slept')")
    assert answer == "slept"
    assert launchers and os.getpid() not in launchers, launchers
    for pid in launchers:  # a worker process of this process's pool started the sandbox
        assert POOL_WORKER in command_line(pid) and parent_of(pid) == os.getpid()


@pytest.fixture
def on_ray():
    """This process scores on a local Ray cluster (started here, as --reward-backend ray without an address does)."""
    ray = pytest.importorskip("ray", reason='the Ray backend is tested with its extra: pip install "grpo-core[ray]"')
    started = not ray.is_initialized()
    configure_scoring(backend="ray")
    yield
    configure_scoring()
    if started:
        ray.shutdown()


@pytest.mark.slow
def test_with_the_ray_backend_each_call_runs_as_a_ray_task(on_ray):
    sandbox = PythonSandbox(seconds=20)  # a 1.5 s sleep, with room for a loaded machine's start-up
    sandbox.reset()
    assert sandbox.run_python(code="print('warm')") == "warm"  # the actors are up before anything is watched
    answer, launchers = launchers_while(sandbox, "import time\ntime.sleep(1.5)\nprint('slept on ray')")
    assert answer == "slept on ray" and launchers and os.getpid() not in launchers
    for pid in launchers:  # a grpo-core worker held by a Ray actor started the sandbox
        actor = parent_of(pid)
        assert POOL_WORKER in command_line(pid) and actor != os.getpid()
        assert command_line(actor).startswith("ray::"), command_line(actor)
    limited = PythonSandbox(seconds=2)
    limited.reset()
    assert limited.run_python(code="while True:\n    pass") == "[stopped: the program ran past its 2 s limit]"
    assert limited.run_python(code="print(6 * 7)") == "42"


def test_a_hanging_program_is_stopped_at_its_limit_and_the_next_call_works():
    sandbox = PythonSandbox(seconds=1)
    sandbox.reset()
    for code in ("while True:\n    pass", "import time\ntime.sleep(3600)", "import os\nos.read(0, 1)\nwhile 1: pass"):
        start = time.monotonic()
        answer = sandbox.run_python(code=code)
        seconds = time.monotonic() - start
        assert answer == "[stopped: the program ran past its 1 s limit]", (code, answer)
        assert seconds < 1 + 2.5, f"{code!r} took {seconds:.1f} s"
        assert sandbox.run_python(code="print('next')") == "next"
    assert OUTER_GRACE_S > 2  # the pool's own limit fires only when the sandbox itself is stuck


def wait_until_no_sandbox_is_left() -> None:
    deadline = time.monotonic() + 3
    while sandbox_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sandbox_processes() == [], "a process of the program was left behind"


# Nothing behind counts every sandbox process on the machine (a program's processes may leave the process tree, so
# this process's descendants are not enough), which would count another test process's: alone.
@pytest.mark.alone
@pytest.mark.parametrize("label, code, says", [
    ("infinite loop", "while True:\n    pass", "ran past its 2 s limit"),
    ("printing 100 MB", "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 1024 ** 2)", "more than 64 KiB"),
    ("printing 100 MB at once", "print('x' * 100 * 1024 ** 2)", "more than 64 KiB"),
    ("fork bomb", "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass", "ran past"),
    ("forking children that sleep", "import os, time\nfor _ in range(100):\n    try:\n        if os.fork() == 0:\n"
     "            time.sleep(60)\n    except OSError:\n        break\nprint('forked')", "forked"),
    ("allocating 50 GB", "x = bytearray(50 * 1024 ** 3)", "MemoryError"),
    ("killing its parent", "import os\nos.kill(os.getppid(), 9)\nprint('done')", ""),
    ("killing every process it can", "import os\nos.kill(-1, 9)", ""),
    ("deep recursion", "import sys\nsys.setrecursionlimit(10 ** 6)\ndef f(n):\n    return f(n + 1)\nf(0)", ""),
    ("a background process", "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(30)\nprint('left')", "left"),
])
def test_hostile_programs_leave_the_trainer_running_and_nothing_behind(label, code, says):
    sandbox = PythonSandbox(seconds=2)
    sandbox.reset()
    start = time.monotonic()
    answer = sandbox.run_python(code=code)
    assert time.monotonic() - start < 2 + 2.5
    assert isinstance(answer, str) and len(answer) < 1200 and says in answer, answer
    wait_until_no_sandbox_is_left()
    assert sandbox.run_python(code="print('still here')") == "still here"


# Looks everywhere a program might find the row's hidden tests: its environment, every process's environment and
# command line it can see, files of the trainer (its folder, /tmp, the home folder, the project), the trainer's
# memory, and the code reward's own modules, which could regenerate code-tasks' rows from their seed.
SEARCH = '''
import os, sys
SECRET, PLANTED, PROJECT, SITE = {secret!r}, {planted!r}, {project!r}, {site!r}
found, looked = [], 0
def look(where, text):
    global looked
    looked += 1
    if SECRET in text:
        found.append(where)
look("os.environ", repr(dict(os.environ)))
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for name in ("environ", "cmdline", "mem"):
            try:
                with open(f"/proc/{{pid}}/{{name}}", "rb") as handle:
                    look(f"/proc/{{pid}}/{{name}}", handle.read(1 << 20).decode("latin-1"))
            except OSError:
                pass
for path in PLANTED:
    try:
        look(path, open(path).read())
    except OSError:
        pass
for root in ("/tmp", os.path.expanduser("~"), "/root", "/home", PROJECT):
    for folder, _, files in os.walk(root):
        for name in files[:200]:
            try:
                with open(os.path.join(folder, name), "rb") as handle:
                    look(os.path.join(folder, name), handle.read(1 << 16).decode("latin-1"))
            except OSError:
                pass
        if looked > 3000:
            break
sys.path[:0] = [os.path.join(PROJECT, "plugins", "grpo-reward-code"), SITE]
try:
    import grpo_reward_code.tasks
    found.append("imported grpo_reward_code.tasks")
except ImportError:
    pass
print("looked in", looked, "places; found:", found)
'''


def test_the_rows_hidden_tests_cannot_be_reached_from_the_code(tmp_path, monkeypatch):
    import grpo_reward_code

    planted = [tmp_path / "tests.txt", Path("/tmp") / f"grpo-env-python-tests-{os.getpid()}.txt"]
    for path in planted:
        path.write_text(SECRET)
        path.chmod(0o644)
    monkeypatch.setenv("HIDDEN_TESTS", SECRET)
    project = Path(__file__).resolve().parents[3]
    site = str(Path(grpo_reward_code.__file__).resolve().parents[2])  # where the code plugin is installed from
    code = SEARCH.format(secret=SECRET, planted=[str(p) for p in planted], project=str(project), site=site)
    sandbox = PythonSandbox(seconds=10, max_output=5000)
    try:
        sandbox.reset(prompt="Write hidden_secret_7f3a9c(x).", tests=[SECRET], solution="def f(x): return 2 * x")
        answer = sandbox.run_python(code=code)
        assert answer.startswith("looked in ") and answer.endswith("found: []"), answer
        assert int(answer.split()[2]) > 3  # the search ran: the environment, /proc, the planted paths at least
        # The same search without the sandbox finds the planted file: it would find the tests if it could reach them
        control = PythonSandbox(seconds=10, max_output=5000, sandbox="none")
        control.reset()
        leaked = control.run_python(code=code)
        assert str(planted[1]) in leaked, leaked
    finally:
        planted[1].unlink()
