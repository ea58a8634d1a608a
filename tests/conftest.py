"""Helpers shared by the tests."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """``preexec_fn`` for a child that a test interrupts with SIGINT: the
    default disposition, so the child's Python turns SIGINT into
    KeyboardInterrupt even when pytest runs as a background job (which starts
    with SIGINT ignored, and children inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
