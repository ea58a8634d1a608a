"""The README's quick start, run exactly as written on a copy of this checkout.

The two ``sh`` blocks of "## Quick start" are executed with ``bash`` in a copy
of the tracked files (as a fresh clone has them), in order, in the same
directory: the first builds the package into a new virtual environment and
prints the collapse table, whose rows must be the ones the README shows (a
run is a pure function of its scenario and seed); the second runs ``.ci/run``, every
linter and test. About 15 minutes on two cores, so ``slow``:
``pytest -m slow tests/test_readme.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def quick_start() -> tuple[list[str], str]:
    """The quick start's shell commands, and the output block shown after the first."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(\w*)\n(.*?)```", section, flags=re.S)
    commands = [body.strip() for lang, body in blocks if lang == "sh"]
    outputs = [body for lang, body in blocks if lang == ""]
    return commands, outputs[0]


def test_the_quick_start_has_exactly_two_commands() -> None:
    commands, table = quick_start()
    assert len(commands) == 2 and all("\n" not in c for c in commands), commands
    assert commands[0].startswith("python3 -m venv .venv") and "incast run" in commands[0]
    assert commands[1].endswith("bash .ci/run")
    assert table.splitlines()[1].split()[:3] == ["servers", "goodput", "Mbps"]


@pytest.mark.slow
def test_the_quick_start_runs_as_written_on_a_fresh_copy(tmp_path: Path) -> None:
    commands, table = quick_start()
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split("\0")
    clone = tmp_path / "incast"
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, clone / name)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CARGO_TARGET_DIR", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if ".venv" not in p and "venv/" not in p)
    first = subprocess.run(["bash", "-c", commands[0]], cwd=clone, env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr[-3000:]
    assert table.splitlines()[0] in first.stdout.splitlines(), first.stdout
    # The README shows the table's rows without the box and the events/s column.
    printed = [[c.strip() for c in line.strip("│").split("│")] for line in first.stdout.splitlines() if "│" in line]
    shown = [line.split() for line in table.splitlines() if line.split() and line.split()[0].isdigit()]
    assert shown == [row[: len(shown[0])] for row in printed], first.stdout
    second = subprocess.run(["bash", "-c", commands[1]], cwd=clone, env=env, capture_output=True, text=True)
    assert second.returncode == 0, (second.stdout + second.stderr)[-3000:]
    assert re.search(r"\d+ passed", second.stdout), second.stdout[-2000:]
