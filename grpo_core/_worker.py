"""Worker process for grpo_core.timeout: reads pickled calls, writes pickled results."""

import os
import pickle
import signal
import sys
from multiprocessing.connection import Connection


def main() -> None:
    # Ctrl-C belongs to the parent, which kills workers itself; stdout stays free for the protocol.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.dup2(2, 1)
    recv = Connection(int(sys.argv[1]), writable=False)
    send = Connection(int(sys.argv[2]), readable=False)
    funcs: dict[bytes, object] = {}
    while True:
        try:
            payload = recv.recv_bytes()
        except (EOFError, OSError):
            return
        try:
            func_bytes, args, kwargs = pickle.loads(payload)
            func = funcs.get(func_bytes)
            if func is None:
                func = funcs[func_bytes] = pickle.loads(func_bytes)
            send.send_bytes(pickle.dumps(("started", None)))
            reply = ("ok", func(*args, **kwargs))
        except BaseException as error:  # report everything; the parent decides
            reply = ("err", f"{type(error).__name__}: {error}")
        try:
            send.send_bytes(pickle.dumps(reply))
        except (BrokenPipeError, OSError):
            return


if __name__ == "__main__":
    main()
