"""Helpers shared by the tests."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest


def default_sigint() -> None:
    """``preexec_fn`` for a child that a test interrupts with SIGINT: the
    default disposition, so the child's Python turns SIGINT into
    KeyboardInterrupt even when pytest runs as a background job (which starts
    with SIGINT ignored, and children inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(autouse=True, scope="session")
def _own_cache_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Sweeps sign their cache with a key in ``$XDG_CONFIG_HOME``: the tests' own, not the user's."""
    previous = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("config"))
    yield
    if previous is None:
        del os.environ["XDG_CONFIG_HOME"]
    else:
        os.environ["XDG_CONFIG_HOME"] = previous


def two_point_experiment(name: str, figure: int, plot: bool = False) -> str:
    """An experiment file of two points (1 and 4 servers, 3 blocks of 64 KiB each), one seed, a plot if asked."""
    text = f"""
[meta]
name = "{name}"
paper = "FAST08"
section = "4"
figure = "Figure {figure}"
title = "two points"

[base]
blocks = 3
[base.workload]
sru = "64KiB"

[sweep]
servers = [1, 4]

[run]
seeds = 1
"""
    return text + ('\n[[plot]]\nx = "servers"\ny = "goodput_mbps"\n' if plot else "")
