"""The process that runs inside the sandbox: it sets the limits, then runs the program in a child process.

It is started as ``python -I -S -c <this file's text>`` and reads one job (marshal, from the calling process)
from its standard input: ``{"program": ..., "mode": "assert" | "io" | "run", "tests": [...], "deadline": seconds,
"limits": {...}, "uid": ..., "pid_namespace": ...}``. It writes one line per finished test to its standard
output, ``INDEX<tab>STATUS<tab>HEX``, which only it holds: the program's child gets other descriptors.

``run`` mode is ``io`` mode as a script runs: the program's standard error is read too, an exception it does not
catch is printed there as a traceback (exit status 1), and ``SystemExit`` sets the exit status; its lines are
``INDEX<tab>STATUS<tab>HEX<tab>HEX OF STANDARD ERROR<tab>EXIT STATUS<tab>LIMIT``, where LIMIT names the
sandbox limit behind an exception the program did not catch (``memory``, ``file_size``, ``processes``,
``open_files``) or is ``-``.

A program the CPU-time limit ends has the status ``cpu``; one the wall clock stops, ``timeout``. The CPU limit
is above the wall clock's, so only threads spending several cores at once meet it first.

It never runs the program's code. In ``io`` mode the child runs the program on each input and the worker
passes the output on. In ``assert`` mode the child runs the program once and then answers calls: the worker
evaluates each test itself, with the builtins as they were, where each function the program defined is a
stand-in that sends the arguments to the child and gets back the plain value (numbers, text, lists, tuples,
sets, dicts, None) it returned. So a program cannot make a test pass by exiting early, patching builtins,
returning an object equal to everything, or writing result lines: whether a test passed is decided here,
and the expected value of ``assert EXPRESSION == LITERAL`` never even reaches the sandbox (the calling
process compares it). It imports only builtin and C modules at start (json would import re, doubling its
start-up time), and ``ast`` in assert mode.
"""
import errno
import marshal
import os
import resource
import select
import signal
import sys
import time


def main():
    job = marshal.loads(sys.stdin.buffer.read())
    if job["mode"] == "assert":
        import ast  # noqa: F401  (loaded while the interpreter's files are readable: a uid of our own may not be)
    elif job["mode"] == "run":
        import linecache  # noqa: F401  (the same: run_script shows a traceback with them)
        import traceback  # noqa: F401
    if job.get("uid") is not None:  # started as root: drop to a uid of its own before running anything
        os.setgroups([])
        os.setgid(job["uid"])
        os.setuid(job["uid"])  # which also makes this process undumpable: the program cannot read it
    else:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: nothing run later can gain privileges
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: the program cannot read this process through /proc
    out = os.fdopen(os.dup(1), "wb")  # results go only through this descriptor; the program never gets it
    os.set_inheritable(out.fileno(), False)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    limits = job["limits"]
    for name, value in (("RLIMIT_CPU", limits["cpu"]), ("RLIMIT_AS", limits["memory"]),
                        ("RLIMIT_FSIZE", limits["file_size"]), ("RLIMIT_NPROC", limits["processes"]),
                        ("RLIMIT_NOFILE", limits["open_files"]), ("RLIMIT_CORE", 0)):
        try:  # the CPU limit's hard value a second above the soft one: SIGXCPU first, SIGKILL if it is ignored
            resource.setrlimit(getattr(resource, name), (value, value + (name == "RLIMIT_CPU")))
        except (ValueError, OSError):
            pass
    # In its own PID namespace, or as a uid of its own, kill(-1) reaches only the program's processes.
    sweep = job["pid_namespace"] or job.get("uid") is not None
    end = time.monotonic() + job["deadline"]
    if job["mode"] in ("io", "run"):
        errors = job["mode"] == "run"
        for index, test in enumerate(job["tests"]):
            status, text, error_text, code, limit = run_io(job["program"], test, end, limits, sweep, errors)
            report(out, index, status, text, *((error_text, code, limit or "-") if errors else ()))
            if status in ("timeout", "cpu"):
                break
    else:
        run_asserts(job["program"], job["tests"], end, out, sweep, limits["cpu"])


def report(out, index, status, data=b"", *extra):
    """One result line; ``extra`` fields are bytes (written as hex) or an exit status (a number, or None)."""
    fields = [b"%d" % index, status.encode(), data.hex().encode()]
    fields += [field.hex().encode() if isinstance(field, bytes) else str(field).encode() for field in extra]
    out.write(b"\t".join(fields) + b"\n")
    out.flush()


def start_child(program, stdin_fd, stdout_fd, calls=None, stderr_fd=None, limit_fd=None):
    """Fork the child that runs ``program`` with the given standard input and output (``calls``: the two
    pipe ends it answers calls on, moved to descriptors 3 and 4); every other descriptor is closed. With
    ``stderr_fd`` it runs as a script (``run_script``), which names on ``limit_fd`` (moved to descriptor 3)
    the limit behind an exception it did not catch; without, its standard error goes nowhere."""
    pid = os.fork()
    if pid:
        return pid
    try:
        os.setpgid(0, 0)
        os.dup2(stdin_fd, 0)
        os.dup2(stdout_fd, 1)
        os.dup2(os.open(os.devnull, os.O_WRONLY) if stderr_fd is None else stderr_fd, 2)
        if calls:
            os.dup2(calls[0], 3)
            os.dup2(calls[1], 4)
        if limit_fd is not None:
            os.dup2(limit_fd, 3)
        os.closerange(5 if calls else 4 if limit_fd is not None else 3, 1 << 16)
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        namespace = {"__name__": "__main__"}
        if stderr_fd is not None:
            os._exit(run_script(program, namespace))
        try:
            exec(compile(program, "<program>", "exec"), namespace)
        finally:
            sys.stdout.flush()  # what the program printed before it ended (or raised) is its output
        if calls:
            serve(namespace)
    finally:
        os._exit(0)


def run_script(program, namespace):
    """Run ``program`` as ``python`` runs a script; its exit status. An exception it does not catch is printed on
    standard error as a traceback of the program's own lines, and gives 1; ``SystemExit`` gives its code."""
    import linecache  # both loaded by main, before the program runs (and before a uid of our own)
    import traceback

    linecache.cache["<code>"] = (len(program), None, program.splitlines(True), "<code>")
    status, shown = 0, None
    try:
        exec(compile(program, "<code>", "exec"), namespace)
    except SystemExit as ended:
        code = ended.code
        if code is None or isinstance(code, int):
            status = int(code or 0) & 0xFF
        else:
            status, shown = 1, lambda stream, code=code: print(code, file=stream)
    except BaseException as error:  # the program's own frames only: the one above is this function's
        status = 1
        shown = lambda stream, error=error: traceback.print_exception(  # noqa: E731
            type(error), error, error.__traceback__.tb_next, file=stream)
        limit = limit_behind(error)
        if limit:
            try:
                os.write(3, limit.encode())
            except OSError:
                pass
    flush()  # what the program wrote comes before its traceback
    if shown is not None:
        try:
            shown(sys.stderr)
        except BaseException:
            os.write(2, b"the program ended with an error that cannot be shown\n")
        flush()
    return status


def limit_behind(error):
    """The sandbox limit that raised ``error``, or None: memory, a file's size (EFBIG), open files (EMFILE),
    processes (a fork refused with EAGAIN while this process still cannot fork)."""
    if isinstance(error, MemoryError):
        return "memory"
    number = getattr(error, "errno", None) if isinstance(error, OSError) else None
    if number == errno.EFBIG:
        return "file_size"
    if number == errno.EMFILE:
        return "open_files"
    if number == errno.EAGAIN:
        try:
            pid = os.fork()
        except OSError as again:
            return "processes" if again.errno == errno.EAGAIN else None
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    return None


def cpu_limited(wait_status, usage, cpu_limit):
    """Whether the CPU-time limit ended the process: SIGXCPU (at the soft limit) or SIGKILL (a second later, at the
    hard one) with its CPU time near the soft limit. The time wait4 reports can fall a tenth short of the kernel's
    count for the limit, hence the margins; a signal the program sent itself early stays a signal."""
    if not os.WIFSIGNALED(wait_status):
        return False
    used, number = usage.ru_utime + usage.ru_stime, os.WTERMSIG(wait_status)
    return (number == signal.SIGXCPU and used >= 0.75 * cpu_limit
            or number == signal.SIGKILL and used >= 0.9 * cpu_limit + 0.5)


def flush():
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass


def stop(pid, sweep):
    for kill in ((lambda: os.kill(-1, signal.SIGKILL)) if sweep else (lambda: None),
                 lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except OSError:
            pass


def run_io(program, text, end, limits, sweep, errors=False):
    """Run the program on one input: (status "ok" | "error" | "timeout" | "cpu" | "output", what it printed,
    what it printed on standard error, exit status, the limit behind an uncaught exception or None). Its
    standard error is read only with ``errors`` (run mode, where the exit status decides ok or error); the
    output limit bounds both outputs together."""
    cap = limits["output"]
    name = "stdin-%d.txt" % os.getpid()  # a file, not a pipe: a program that never reads cannot block us
    with open(name, "w") as handle:
        handle.write(text)
    input_fd = os.open(name, os.O_RDONLY)
    os.unlink(name)
    read_end, write_end = os.pipe()
    error_read, error_write = os.pipe() if errors else (None, None)
    limit_read, limit_write = os.pipe() if errors else (None, None)
    pid = start_child(program, input_fd, write_end, stderr_fd=error_write, limit_fd=limit_write)
    for fd in (write_end, input_fd, error_write, limit_write):
        if fd is not None:
            os.close(fd)
    reading = [read_end] + ([error_read] if errors else [])
    chunks = {fd: [] for fd in reading}
    size, status, exited = 0, None, None
    while reading and status is None:
        left = end - time.monotonic()
        if left <= 0:
            status = "timeout"
            break
        ready = select.select(reading, [], [], min(left, 0.05))[0]
        if not ready:
            if exited is None:
                exited = os.wait4(pid, os.WNOHANG)
                exited = exited if exited[0] else None
            if exited is not None and not select.select(reading, [], [], 0)[0]:
                break  # the program ended; a process it left behind holds the pipe open
            continue
        for fd in ready:
            data = os.read(fd, 65536)
            if not data:
                reading.remove(fd)
                continue
            size += len(data)
            if size > cap:
                status = "output"
                break
            chunks[fd].append(data)
    stop(pid, sweep)
    for fd in chunks:
        os.close(fd)
    _, wait_status, usage = exited if exited is not None else os.wait4(pid, 0)
    code = limit = None
    if status is None and cpu_limited(wait_status, usage, limits["cpu"]):
        status = "cpu"
    elif status is None:
        if os.WIFEXITED(wait_status):
            code = os.WEXITSTATUS(wait_status)
        elif os.WIFSIGNALED(wait_status):
            code = -os.WTERMSIG(wait_status)
        status = "ok" if code == 0 else "error"
    if limit_read is not None:
        if status == "error" and select.select([limit_read], [], [], 0)[0]:
            limit = os.read(limit_read, 64).decode("ascii", "replace") or None
        os.close(limit_read)
    return status, b"".join(chunks[read_end]), b"".join(chunks.get(error_read, ())), code, limit


MAX_REPLY = 1 << 20


class Channel:
    """The worker's end of the call pipes: one line out, one line back, within the deadline."""

    def __init__(self, send_fd, receive_fd, end):
        self.send_fd, self.receive_fd, self.end, self.buffer = send_fd, receive_fd, end, b""

    def line(self):
        while b"\n" not in self.buffer:
            left = self.end - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if not select.select([self.receive_fd], [], [], left)[0]:
                continue
            data = os.read(self.receive_fd, 65536)
            if not data or len(self.buffer) > MAX_REPLY:
                raise EOFError
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode("utf-8", "replace")

    def call(self, name, args, kwargs):
        request = repr((name, args, kwargs))
        try:
            os.write(self.send_fd, request.encode("utf-8", "backslashreplace") + b"\n")
        except OSError:
            raise EOFError from None
        status, _, value = self.line().partition("\t")
        if status != "ok":
            raise RuntimeError("the call raised")
        import ast

        return ast.literal_eval(value)  # plain values only: never an object of the program's


def run_asserts(program, tests, end, out, sweep, cpu_limit):
    import builtins

    pristine = dict(builtins.__dict__)
    to_child, from_child = os.pipe(), os.pipe()
    null = os.open(os.devnull, os.O_RDWR)
    pid = start_child(program, null, null, calls=(to_child[0], from_child[1]))
    for fd in (to_child[0], from_child[1], null):
        os.close(fd)
    channel = Channel(to_child[1], from_child[0], end)
    namespace = {"__builtins__": pristine}
    try:
        names = channel.line().split("\t")
    except TimeoutError:  # the program itself ran past the deadline before any test
        report(out, 0, "timeout")
        stop(pid, sweep)
        os.waitpid(pid, 0)
        return
    except EOFError:  # it ended without defining anything to call: each test fails, unless a limit ended it
        stop(pid, sweep)
        if cpu_limited(*os.wait4(pid, 0)[1:], cpu_limit):
            report(out, 0, "cpu")
            return
        pid, names = None, []
    for name in names[:1000]:
        if name.isidentifier() and name not in pristine and not name.startswith("__"):
            namespace[name] = (lambda n: lambda *args, **kwargs: channel.call(n, args, kwargs))(name)
    for index, test in enumerate(tests):
        try:
            if test["setup"]:
                exec(compile(test["setup"], "<test>", "exec"), namespace)
            if test["kind"] == "value":
                value = eval(compile(test["expression"], "<test>", "eval"), namespace)
                report(out, index, "value", repr(value).encode("utf-8", "backslashreplace"))
            else:
                exec(compile(test["statement"], "<test>", "exec"), namespace)
                report(out, index, "pass")
        except TimeoutError:
            report(out, index, "timeout")
            break
        except EOFError:  # the program's process is gone: no later test can pass
            if pid is None:
                break
            stop(pid, sweep)  # a process that has ended keeps the status it ended with
            if cpu_limited(*os.wait4(pid, 0)[1:], cpu_limit):
                report(out, index, "cpu")
            return
        except BaseException:  # a failed assert, an error, or test code that exits: the test failed
            report(out, index, "fail")
    if pid is not None:
        stop(pid, sweep)
        os.waitpid(pid, 0)


def serve(namespace):
    """In the child: announce the program's names, then answer calls ``(name, args, kwargs)`` one per line."""
    import ast

    plain_types = (int, float, complex, str, bytes, bool, type(None))
    containers = (list, tuple, set, frozenset, dict)

    def plain(value, depth=0):
        kind = type(value)
        if kind in plain_types:
            return True
        if kind in containers and depth < 100:
            items = [x for pair in value.items() for x in pair] if kind is dict else value
            return all(plain(item, depth + 1) for item in items)
        return False

    names = [k for k, v in namespace.items() if callable(v) and not k.startswith("__")]
    os.write(4, ("\t".join(names) + "\n").encode())
    buffer = b""
    while True:
        while b"\n" not in buffer:
            data = os.read(3, 65536)
            if not data:
                return
            buffer += data
        line, buffer = buffer.split(b"\n", 1)
        name, args, kwargs = ast.literal_eval(line.decode())
        try:
            value = namespace[name](*args, **kwargs)
            reply = "ok\t%r" % (value,) if plain(value) else "error\t"
        except Exception:
            reply = "error\t"
        os.write(4, reply.encode("utf-8", "backslashreplace") + b"\n")


if __name__ == "__main__":
    main()
