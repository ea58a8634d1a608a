"""The testbed's two failures: the machine cannot run it, or a run failed."""

from __future__ import annotations

from incast.errors import IncastError

__all__ = ["TestbedError", "TestbedUnavailable"]


class TestbedUnavailable(Exception):
    """This machine cannot run the testbed (not root, not Linux, no ``ip``/``tc``); the message is one line."""


class TestbedError(IncastError):
    """The testbed failed on a valid scenario: a command, a server or the client; the message is one line."""
