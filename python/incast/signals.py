"""How long-running verbs meet SIGINT and SIGTERM: as Ctrl-C, and never in the middle of a fork or a swap.

:func:`stop_signals_raise_keyboard_interrupt` makes SIGTERM end a block as
Ctrl-C does (``KeyboardInterrupt``), so a sweep, a server or a testbed run
that is told to stop cleans up the same way either way. :func:`signals_held`
defers both signals to the end of a block: an exception raised from a signal
handler in the middle of ``fork`` (in an at-fork hook, where Python ignores
it) or between two renames would be lost or leave a half-done step.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["STOP_SIGNALS", "signals_held", "stop_signals_raise_keyboard_interrupt"]

#: The signals that ask a verb to stop.
STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})


@contextmanager
def stop_signals_raise_keyboard_interrupt() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise KeyboardInterrupt, even in a
    process started with SIGINT ignored (a shell's background job). Main
    thread only, as Python allows handlers nowhere else."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends (``pthread_sigmask``); a child forked inside inherits the mask."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
