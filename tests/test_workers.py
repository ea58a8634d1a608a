"""A sweep's worker processes end with the sweep, however it ends: SIGKILL, SIGTERM or Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import default_sigint

#: Points of a few seconds each: both workers are busy when the sweep is killed.
LONG = """
[meta]
name = "fast08-fig96"
paper = "FAST08"
section = "4"
figure = "Figure 96"
title = "long points"

[base]
duration = "60s"
[base.workload]
sru = "1MiB"

[sweep]
servers = [1, 2, 3, 4]

[run]
seeds = 1
"""


def processes_marked(marker: str) -> set[int]:
    """Every live process whose environment carries ``marker`` (the sweep and the workers it forked)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in environ.split(b"\0") and state != "Z":
            found.add(int(entry.name))
    return found


def wait_until(condition: object, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; the parent-death signal is Linux's")
@pytest.mark.parametrize("verb", ["sweep", "reproduce"])
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_killing_a_sweep_leaves_no_worker_alive(tmp_path: Path, verb: str, how: signal.Signals) -> None:
    path = tmp_path / "long.toml"
    path.write_text(LONG)
    marker = f"INCAST_TEST_SWEEP={uuid.uuid4().hex}"
    name, _, value = marker.partition("=")
    command = [sys.executable, "-m", "incast", verb, str(path), "--out", str(tmp_path / "out"), "--jobs", "2", "--json"]
    proc = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, name: value},
        start_new_session=True,
        preexec_fn=default_sigint,
    )
    try:
        assert wait_until(lambda: len(processes_marked(marker) - {proc.pid}) >= 2), "the workers never started"
        workers = processes_marked(marker) - {proc.pid}
        os.kill(proc.pid, how)
        _, err = proc.communicate(timeout=120)
        assert wait_until(lambda: not (processes_marked(marker) & workers)), f"workers left: {workers}"
        if how == signal.SIGTERM:
            assert proc.returncode == 130 and err.startswith("interrupted: ") and err.count("\n") == 1, err
    finally:
        for pid in processes_marked(marker):
            os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=60)
