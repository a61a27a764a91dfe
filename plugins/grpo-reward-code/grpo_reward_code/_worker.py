"""The process that runs inside the sandbox: it sets the limits, then runs the program in child processes.

It is started as ``python -I -S -c <this file's text>`` and reads one job (JSON) from its standard input:
``{"program": ..., "mode": "assert" | "io", "tests": [...], "deadline": seconds, "limits": {...}}``.
It writes one JSON line per finished test to its standard output, which only it holds: the program's
children get other descriptors. It never runs the program's code itself, and it never sees an expected
value of a value test or an expected output: those stay in the calling process, which compares them.
"""
import json
import os
import resource
import signal
import sys
import time


def main():
    import ctypes
    import select  # noqa: F401  (imported before dropping privileges, while the interpreter's files are readable)

    job = json.loads(sys.stdin.buffer.read())
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: nothing run later can gain privileges
    if job.get("uid") is not None:  # started as root: drop to a uid of its own before running anything
        os.setgroups([])
        os.setgid(job["uid"])
        os.setuid(job["uid"])
    out = os.fdopen(os.dup(1), "w")  # results go only through this descriptor; the program never gets it
    os.set_inheritable(out.fileno(), False)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: the program cannot read this process through /proc or ptrace
    limits = job["limits"]
    for name, value in (("RLIMIT_CPU", limits["cpu"]), ("RLIMIT_AS", limits["memory"]),
                        ("RLIMIT_FSIZE", limits["file_size"]), ("RLIMIT_NPROC", limits["processes"]),
                        ("RLIMIT_NOFILE", limits["open_files"]), ("RLIMIT_CORE", 0)):
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
        except (ValueError, OSError):
            pass
    end = time.monotonic() + job["deadline"]
    cap = limits["output"]
    if job["mode"] == "io":
        for index, test in enumerate(job["tests"]):
            status, text = run_child(job["program"], end, cap, stdin_text=test, own_namespace=job["pid_namespace"])
            report(out, {"i": index, "status": status, "out": text})
            if status == "timeout":
                break
    else:
        run_child(job["program"], end, cap, tests=job["tests"], out=out, own_namespace=job["pid_namespace"])


def report(out, record):
    out.write(json.dumps(record) + "\n")
    out.flush()


def run_child(program, end, cap, stdin_text=None, tests=None, out=None, own_namespace=False):
    """Fork a child that runs ``program``; return ("ok" | "error" | "timeout", captured output)."""
    read_end, write_end = os.pipe()
    input_fd = None
    if stdin_text is not None:  # a file rather than a pipe: a program that never reads cannot block the worker
        name = "stdin-%d.txt" % os.getpid()
        with open(name, "w") as handle:
            handle.write(stdin_text)
        input_fd = os.open(name, os.O_RDONLY)
        os.unlink(name)
    pid = os.fork()
    if pid == 0:  # the child: the only process that runs the program's code
        try:
            os.close(read_end)
            os.setpgid(0, 0)
            if input_fd is not None:
                os.dup2(input_fd, 0)
                os.dup2(write_end, 1)
            else:
                os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            out_fd = None
            if tests is not None:  # the result pipe moves to descriptor 3; every other descriptor is closed
                os.dup2(write_end, 3)
                out_fd = 3
            os.closerange(3 if out_fd is None else 4, 1 << 16)
            sys.stdin = open(0, closefd=False)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", closefd=False)
            child(program, tests, out_fd)
        finally:
            try:  # what the program printed before it ended (or raised) is its output
                sys.stdout.flush()
            except BaseException:
                pass
            os._exit(0)
    os.close(write_end)
    if input_fd is not None:
        os.close(input_fd)
    chunks, size, status = [], 0, None
    import select  # noqa: F811

    buffer = b""
    exited = None
    while True:
        left = end - time.monotonic()
        if left <= 0:
            status = "timeout"
            break
        ready, _, _ = select.select([read_end], [], [], min(left, 0.05))
        if not ready:
            if exited is None:
                exited = os.waitpid(pid, os.WNOHANG)
                exited = exited if exited[0] else None
            if exited is not None and not select.select([read_end], [], [], 0)[0]:
                break  # the program ended; a process it left behind holds the pipe open
            continue
        data = os.read(read_end, 65536)
        if not data:
            break
        size += len(data)
        if size > cap:
            status = "output"
            break
        if tests is None:
            chunks.append(data)
        else:  # forward complete result lines as they come, so a later hang keeps the earlier results
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                relay(out, line, len(tests))
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    if own_namespace:  # every process the program started, wherever it went (not this one, not the init)
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
    os.close(read_end)
    wait_status = exited[1] if exited is not None else os.waitpid(pid, 0)[1]
    if status is None:
        status = "ok" if os.WIFEXITED(wait_status) and os.WEXITSTATUS(wait_status) == 0 else "error"
    return status, b"".join(chunks).decode("utf-8", "replace")


def relay(out, line, count):
    """Pass on one result line from the child, checked for shape; anything else is dropped."""
    try:
        record = json.loads(line)
        index = record["i"]
        if not isinstance(index, int) or not 0 <= index < count or record["status"] not in ("pass", "fail", "value"):
            return
        value = record.get("value")
        if value is not None and (not isinstance(value, str) or len(value) > 100_000):
            return
        report(out, {"i": index, "status": record["status"], "value": value})
    except Exception:
        return


PLAIN = (int, float, complex, str, bytes, bool, type(None))


def child(program, tests, out_fd):
    """Run the program as ``__main__``; then each test: a value test sends back the value of its expression
    (the calling process compares it), an assert test says whether it passed."""
    plain_type, plain_repr, write, exec_, eval_, compile_ = type, repr, os.write, exec, eval, compile
    containers = (list, tuple, set, frozenset, dict)

    def plain(value, depth=0):
        kind = plain_type(value)
        if kind in PLAIN:
            return True
        if kind in containers and depth < 50:
            items = value.items() if kind is dict else value
            if kind is dict:
                return all(plain(k, depth + 1) and plain(v, depth + 1) for k, v in items)
            return all(plain(item, depth + 1) for item in items)
        return False

    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    code = compile_(program, "<program>", "exec")
    exec_(code, namespace)
    if tests is None:
        return
    for index, test in enumerate(tests):
        try:
            if test["setup"]:
                exec_(compile_(test["setup"], "<test>", "exec"), namespace)
            if test["kind"] == "value":
                value = eval_(compile_(test["expression"], "<test>", "eval"), namespace)
                if not plain(value):
                    raise TypeError("not a plain value")
                record = {"i": index, "status": "value", "value": plain_repr(value)}
            else:
                exec_(compile_(test["statement"], "<test>", "exec"), namespace)
                record = {"i": index, "status": "pass"}
        except BaseException as error:
            if isinstance(error, SystemExit):
                raise
            record = {"i": index, "status": "fail"}
        write(out_fd, (json.dumps(record) + "\n").encode())


if __name__ == "__main__":
    main()
