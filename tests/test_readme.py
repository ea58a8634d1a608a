"""Every command the README shows runs, as written.

The two ``sh`` blocks of "## Quick start" are executed with ``bash`` in a copy
of the tracked files (as a fresh clone has them), in order, in the same
directory: the first builds the package into a new virtual environment and
prints the collapse table, whose rows must be the ones the README shows (a
run is a pure function of its scenario and seed); the second runs ``.ci/run``,
every linter and test. About 15 minutes on two cores, so ``slow``:
``pytest -m slow tests/test_readme.py``.

Every other ``sh`` block runs line by line in a directory of its own holding
the README's ``toml`` blocks (each names its file on its first line), with the
installed ``incast``; a line ending in ``&`` runs in the background until the
block ends, and the next line waits for the port it listens on. The ``python``
block runs too. The testbed's block needs root, ns-2's the ``ns`` command;
each is skipped, with that reason, where they are missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"```(\w*)\n(.*?)```", flags=re.S)


def section(title: str) -> str:
    """The text of one ``## `` section."""
    return README.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def quick_start() -> tuple[list[str], str]:
    """The quick start's shell commands, and the output block shown after the first."""
    blocks = FENCE.findall(section("Quick start"))
    commands = [body.strip() for lang, body in blocks if lang == "sh"]
    outputs = [body for lang, body in blocks if lang == ""]
    return commands, outputs[0]


def tour_blocks() -> list[list[str]]:
    """Every ``sh`` block outside the quick start, as its command lines."""
    rest = README.replace(section("Quick start"), "")
    return [[line for line in body.splitlines() if line.strip()] for lang, body in FENCE.findall(rest) if lang == "sh"]


def files() -> dict[str, str]:
    """The README's ``toml`` blocks by the file name each gives on its first line."""
    out = {}
    for lang, body in FENCE.findall(README):
        if lang == "toml":
            first = body.splitlines()[0]
            assert first.startswith("# ") and first.endswith(".toml"), f"a toml block names no file: {first!r}"
            out[first[2:]] = body
    return out


def needs(block: list[str]) -> str | None:
    """Why a block cannot run on this machine, or None."""
    text = "\n".join(block)
    if "--against ns2" in text and shutil.which("ns") is None:
        return "needs ns-2.35's ns command (Debian's ns2 package)"
    if re.search(r"incast (testbed|validate)(?!.*--against ns2)", text) and (
        os.geteuid() != 0 or shutil.which("ip") is None
    ):
        return "the testbed builds network namespaces: needs root and iproute2"
    return None


def wait_for_port(port: int, server: subprocess.Popen[str]) -> None:
    """Until something listens on ``port`` of this host, or the server has exited."""
    for _ in range(600):
        if server.poll() is not None:
            pytest.fail(f"the background command exited with status {server.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    pytest.fail(f"nothing listened on port {port}")


def env() -> dict[str, str]:
    """This interpreter's ``bin`` first on the PATH, so that ``incast`` is the one under test."""
    e = dict(os.environ)
    e["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), e["PATH"]])
    return e


def check(line: str, out: str, cwd: Path) -> None:
    """What each kind of command must have produced besides exit status 0."""
    if "--json" in line:
        assert all(json.loads(obj) for obj in out.splitlines() if obj.strip()), out
    if line.startswith("incast run") and "--json" not in line:
        alone = "--traffic" in line and "--servers" not in line  # the flows without reads
        assert re.search(r"open-loop flows\s+[1-9]" if alone else r"goodput\s+(Mbps|[0-9.]+ Mbps)", out), out
    if "--trace-dir traces" in line:
        assert list((cwd / "traces").glob("*.parquet")), "no traces written"
    if "--pcap pcap" in line:
        assert list((cwd / "pcap").glob("*.pcap")), "no captures written"
    if line.startswith("incast reproduce fast08-fig04"):
        assert (cwd / "results" / "fast08-fig04" / "points.parquet").is_file()
    if line.startswith("incast report"):
        assert (cwd / "results" / "report.html").is_file()
    if line.startswith("incast sweep buffer-study.toml"):
        assert (cwd / "results" / "buffer-study" / "points.parquet").is_file()
    if line.startswith("incast read"):
        assert "goodput" in out, out


def test_the_quick_start_has_exactly_two_commands() -> None:
    commands, table = quick_start()
    assert len(commands) == 2 and all("\n" not in c for c in commands), commands
    assert commands[0].startswith("python3 -m venv .venv") and "incast run" in commands[0]
    assert commands[1].endswith("bash .ci/run")
    assert table.splitlines()[1].split()[:3] == ["servers", "goodput", "Mbps"]


def test_every_command_line_shown_is_in_a_block_that_runs() -> None:
    """Commands in running text are verbs or options only; whole command lines sit in ``sh`` blocks."""
    shown = "\n".join(line for block in tour_blocks() for line in block)
    prose = FENCE.sub("", README)
    for span in re.findall(r"`(incast [^`]*)`", prose):
        if " --" in span or len(span.split()) > 2:
            assert span in shown, f"{span!r} is shown in the text but runs in no block"


@pytest.mark.parametrize("block", tour_blocks(), ids=lambda b: b[0].split("#")[0].strip()[:60])
def test_the_readme_block_runs(block: list[str], tmp_path: Path) -> None:
    reason = needs(block)
    if reason:
        pytest.skip(reason)
    for name, text in files().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    background: list[subprocess.Popen[str]] = []
    try:
        for line in block:
            command = line.split("  #")[0].strip()
            if command.endswith("&"):
                with open(tmp_path / f"background-{len(background)}.log", "w") as log:
                    server = subprocess.Popen(
                        ["bash", "-c", f"exec {command[:-1]}"], cwd=tmp_path, env=env(), text=True,
                        stdout=log, stderr=subprocess.STDOUT,
                    )  # fmt: skip
                background.append(server)
                port = re.search(r"--port (\d+)", command)
                assert port, f"a background command names no --port: {command}"
                wait_for_port(int(port.group(1)), server)
                continue
            done = subprocess.run(
                ["bash", "-c", command], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=900
            )
            assert done.returncode == 0, f"{command}: status {done.returncode}\n{done.stderr[-3000:]}"
            check(command, done.stdout, tmp_path)
    finally:
        for server in background:
            server.terminate()
            server.wait(timeout=30)


def test_the_readme_python_runs(tmp_path: Path) -> None:
    (code,) = [body for lang, body in FENCE.findall(README) if lang == "python"]
    for name, text in files().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "servers = 8" in done.stdout, done.stdout


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
