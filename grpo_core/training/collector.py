"""Python's cyclic garbage collector around a run: rarer while the libraries load, and blind to them while training.

Importing torch, transformers and TRL creates about half a million long-lived objects, and each of the collector's
full passes walks all of them: on a tiny run that is over a second of a few-second process. While a run loads, the
collector runs only every ``LOADING_THRESHOLD`` allocations (memory stays bounded: garbage is still collected); while
the training loop runs, what existed before it (libraries, model, dataset) is frozen out of its passes
(``gc.freeze``) and given back to it afterwards (``gc.unfreeze``), so a finished run's trainer can be collected before
the next stage, the control run or the comparison loads another model. When the command ends, the interpreter's own
shutdown would walk them all again (over a second); ``skip_at_exit`` freezes them first.
"""

from __future__ import annotations

import atexit
import gc
from contextlib import contextmanager

LOADING_THRESHOLD = (50_000, 20, 100)  # gc.set_threshold's three generations while a run loads (default 700, 10, 10)
_skipping_at_exit = False
_replaced: list[tuple[int, ...]] = []  # the thresholds loading() replaced, until they are restored


@contextmanager
def loading():
    """Collect rarely until the block ends or ``training`` starts inside it; then the thresholds are as before."""
    _replaced.append(gc.get_threshold())
    gc.set_threshold(*LOADING_THRESHOLD)
    try:
        yield
    finally:
        _restore()


@contextmanager
def training():
    """The training loop: the usual thresholds, with every object alive when it starts out of the collector's passes."""
    _restore()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _restore() -> None:
    if _replaced:
        gc.set_threshold(*_replaced[0])
        _replaced.clear()


def skip_at_exit() -> None:
    """When the process ends (after every other exit handler registered later), the interpreter's shutdown leaves
    reference cycles to the operating system instead of collecting them; objects outside cycles are still
    finalized. For a command whose outputs are all written and closed by then. Registered once a process."""
    global _skipping_at_exit
    if not _skipping_at_exit:
        atexit.register(gc.freeze)
        _skipping_at_exit = True
