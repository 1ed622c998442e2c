"""The process is exiting: background work stops between batches, and exit waits for it.

The encoder's loading and the vectors' backfill run in daemon threads. A script that ends
while one of them is inside onnxruntime used to die at exit with SIGABRT or SIGSEGV
(exit code 134 or -11, its work done): the interpreter tore down what the thread was
using under it. At exit, ``exiting`` turns true, a backfill stops after the batch it is
encoding, and exit waits (``JOIN_SECONDS`` at most) for every thread ``started`` here.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from collections.abc import Callable
from typing import Any

# A batch of the transformer takes well under a second; loading it, about one.
JOIN_SECONDS = 30.0

_exiting = threading.Event()
_threads: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
_lock = threading.Lock()


def exiting() -> bool:
    return _exiting.is_set()


def started(target: Callable[..., Any], *, name: str, args: tuple[Any, ...] = ()) -> threading.Thread:
    """A daemon thread running ``target(*args)``, started, that exit waits for. Once the
    process is exiting, nothing new begins: the thread runs nothing (a backfill that ends
    during exit would otherwise start loading the next encoder)."""
    work = (lambda: None) if exiting() else target
    thread = threading.Thread(target=work, args=() if exiting() else args, name=name, daemon=True)
    with _lock:
        _threads.add(thread)
    thread.start()
    return thread


def _at_exit() -> None:
    import time

    _exiting.set()
    deadline = time.monotonic() + JOIN_SECONDS
    while time.monotonic() < deadline:  # again until none runs: one may start another as it ends
        with _lock:
            running = [t for t in _threads if t.is_alive() and t is not threading.current_thread()]
        if not running:
            return
        for thread in running:
            thread.join(max(0.0, deadline - time.monotonic()))


atexit.register(_at_exit)
