"""Worker process for grpo_core.rewards.timeout: reads pickled calls, writes pickled results."""

import os
import pickle
import signal
import sys
import threading
from multiprocessing.connection import Connection


def _die_with_parent(life_fd: int, parent: int) -> None:
    """Exit when the parent exits, even while busy with an item that never returns."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        # The kernel kills this process, so it works even while a C call (a runaway regex) holds the GIL.
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)

    def watch() -> None:  # every platform: the pipe's write end closes when the parent dies
        while os.read(life_fd, 1):
            pass
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


def main() -> None:
    # Ctrl-C belongs to the parent, which kills workers itself; stdout stays free for the protocol.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.dup2(2, 1)
    recv = Connection(int(sys.argv[1]), writable=False)
    send = Connection(int(sys.argv[2]), readable=False)
    _die_with_parent(int(sys.argv[3]), int(sys.argv[4]))
    funcs: dict[bytes, object] = {}
    while True:
        try:
            payload = recv.recv_bytes()
        except (EOFError, OSError):
            return
        request, call = pickle.loads(payload)
        try:
            func_bytes, args, kwargs = pickle.loads(call)
            func = funcs.get(func_bytes)
            if func is None:
                func = funcs[func_bytes] = pickle.loads(func_bytes)
            send.send_bytes(pickle.dumps((request, "started", None)))
            reply = (request, "ok", func(*args, **kwargs))
            data = pickle.dumps(reply)
        except BaseException as error:  # report everything; the parent decides
            data = pickle.dumps((request, "err", f"{type(error).__name__}: {error}"))
        try:
            send.send_bytes(data)
        except (BrokenPipeError, OSError):
            return


if __name__ == "__main__":
    main()
