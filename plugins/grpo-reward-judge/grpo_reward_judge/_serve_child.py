"""Run ``transformers serve ARGS`` and exit when the process that started it is gone (even killed with SIGKILL).

Started by ``grpo_reward_judge.server`` as ``python _serve_child.py PARENT_PID ARGS...``, in its own session.
"""

import os
import sys
import threading
import time


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)  # the parent died: nothing else needs this server


if __name__ == "__main__":
    threading.Thread(target=_watch, args=(int(sys.argv[1]),), daemon=True).start()
    from transformers.cli.transformers import main

    sys.argv = ["transformers", "serve", *sys.argv[2:]]
    main()
