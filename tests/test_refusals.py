"""Careless and hostile input: one line naming the field, status 2, nothing built, no traceback.

Files that are devices, FIFOs or nested thousands deep; option values ``int`` refuses; a missing
extra; a malformed address; a results folder that is not one; a sweep of millions of points; names
with a trailing newline or hundreds of characters.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from incast import Scenario
from incast.cli import main
from incast.errors import ScenarioError

EXPERIMENT = """
[meta]
name = "{name}"
paper = "FAST08"
section = "4"
figure = "Figure 94"
title = "a small sweep"

[base]
blocks = 2

[sweep]
servers = [1, 2]
"""


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


def incast_child(*args: str, timeout: float = 120) -> tuple[int, str]:
    """``incast ARGS`` in a child with bounded memory and time: its status and standard error."""
    proc = subprocess.run(
        [sys.executable, "-m", "incast", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_limit_memory,
        stdin=subprocess.DEVNULL,
    )
    return proc.returncode, proc.stderr


# -- files: size, kind, nesting ----------------------------------------------------


def test_a_servers_file_that_is_a_device_or_a_fifo_is_refused_without_reading_it(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, kind in (("/dev/zero", "a character device"), (str(fifo), "a FIFO")):
        code, err = incast_child("read", "--servers-file", path, timeout=60)
        assert code == 2 and one_line(err) == f"error: servers_file: {path}: is {kind}, not a regular file\n"


def test_a_scenario_file_larger_than_the_cap_is_refused_by_its_size(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    with big.open("wb") as f:
        f.truncate(3 * 10**9)
    code, err = incast_child("run", str(big), timeout=60)
    assert code == 2 and one_line(err) == f"error: {big}: larger than 16 MiB\n"


DEEP = {
    "array": "servers = " + "[" * 5000 + "]" * 5000 + "\n",
    "inline-table": "workload = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n",
    "dotted-header": "[" + ".".join(["a"] * 20_000) + "]\n",
    "dotted-key": ".".join(["a"] * 20_000) + " = 1\n",
}


@pytest.mark.parametrize("text", DEEP.values(), ids=DEEP.keys())
@pytest.mark.parametrize("verb", ["run", "sweep"])
def test_a_file_nested_thousands_deep_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, verb: str
) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(text)
    code, out, err = (
        cli(capsys, verb, str(path), "--out", str(tmp_path / "out"))
        if verb == "sweep"
        else cli(capsys, verb, str(path))
    )
    label = path.name if verb == "sweep" else str(path)
    assert (code, out) == (2, "") and one_line(err) == f"error: {label}: nested deeper than 64 levels\n"
    assert not (tmp_path / "out").exists()


def test_a_mapping_nested_thousands_deep_or_containing_itself_is_refused() -> None:
    deep: dict[str, object] = {}
    node = deep
    for _ in range(2000):
        node["a"] = {}
        node = node["a"]  # type: ignore[assignment]
    with pytest.raises(ScenarioError, match=r"^scenario: nested deeper than 64 levels$"):
        Scenario.parse({"workload": deep})
    loop: dict[str, object] = {"servers": 2}
    loop["workload"] = loop
    with pytest.raises(ScenarioError, match=r"^scenario: contains itself$"):
        Scenario.parse(loop)
    with pytest.raises(ScenarioError, match=r"^tcp: contains itself$"):
        Scenario(servers=2).with_overrides({"tcp": loop})


# -- option values ----------------------------------------------------------------


@pytest.mark.parametrize("servers", ["²", "١٢", "4,²"])
def test_a_server_count_in_digits_int_refuses_is_one_line(capsys: pytest.CaptureFixture[str], servers: str) -> None:
    code, out, err = cli(capsys, "run", "--servers", servers, "--blocks", "1")
    assert (code, out) == (2, "") and one_line(err).startswith("error: servers: ") and "whole number" in err


def test_dask_without_distributed_names_the_extra_to_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    path = tmp_path / "e.toml"
    path.write_text(EXPERIMENT.format(name="fast08-fig94"))
    code, out, err = cli(capsys, "sweep", str(path), "--dask", "tcp://127.0.0.1:1", "--out", str(tmp_path / "out"))
    assert (code, out) == (2, "") and "pip install 'incast[dask]'" in one_line(err)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("timeout", ["0", "-1s", "2d", "1x"])
def test_a_testbed_timeout_out_of_range_is_refused_before_anything_is_built(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, timeout: str
) -> None:
    import incast.testbed.netns as netns

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the testbed was built before its timeout was checked")

    monkeypatch.setattr(netns.Network, "build", never)
    monkeypatch.setattr(netns.Network, "__init__", never)
    code, out, err = cli(capsys, "testbed", "--servers", "2", "--timeout", timeout)
    assert (code, out) == (2, "") and one_line(err).startswith("error: timeout: ")


@pytest.mark.parametrize("server", ["[::1", "::1]", "[::1]x", "[nothost]:7470", "[[::1]]"])
def test_a_malformed_bracketed_address_is_refused_not_looked_up(
    capsys: pytest.CaptureFixture[str], server: str
) -> None:
    code, out, err = cli(capsys, "read", server, "--blocks", "1")
    assert (code, out) == (2, "") and one_line(err).startswith(f"error: servers: {server!r}: ")
    assert "resolve" not in err


def test_a_report_of_a_folder_with_no_results_is_refused_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nonexistent"
    code, out, err = cli(capsys, "report", "--out", str(missing))
    assert (code, out) == (2, "") and one_line(err).startswith("error: --out: ") and not missing.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = cli(capsys, "report", "--out", str(empty))
    assert (code, out) == (2, "") and "holds no results" in one_line(err) and not list(empty.iterdir())


# -- experiments: size and names --------------------------------------------------


def test_a_sweep_of_millions_of_points_is_refused_naming_the_axes_product(tmp_path: Path) -> None:
    servers = ", ".join(str(n) for n in range(1, 401))
    buffers = ", ".join(f'"{k}KiB"' for k in range(32, 132))
    text = EXPERIMENT.format(name="fast08-fig94").replace("servers = [1, 2]", f"servers = [{servers}]")
    path = tmp_path / "huge.toml"
    path.write_text(text + f'"switch.buffer" = [{buffers}]\n[run]\nseeds = 100\n')
    code, err = incast_child("sweep", str(path), "--out", str(tmp_path / "out"), "--jobs", "1", timeout=90)
    assert code == 2 and one_line(err) == (
        "error: sweep: fast08-fig94 has 4,000,000 points (400 servers x 100 switch.buffer x 100 seeds), "
        "more than 100,000; pass --max-points N to run that many\n"
    )
    assert not (tmp_path / "out").exists()


def test_the_point_cap_is_set_by_a_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "e.toml"
    path.write_text(EXPERIMENT.format(name="fast08-fig94"))
    out = str(tmp_path / "out")
    code, _, err = cli(capsys, "sweep", str(path), "--out", out, "--jobs", "1", "--max-points", "5")
    assert code == 2 and "has 6 points (2 servers x 3 seeds), more than 5" in one_line(err)
    assert cli(capsys, "sweep", str(path), "--out", out, "--jobs", "1", "--max-points", "6", "--json")[0] == 0


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("fast08-fig06\\n", "meta.name: must be lower-case letters, digits and single hyphens"),
        ("fast08-fig94\\n", "meta.name: must be lower-case letters, digits and single hyphens"),
        ("fast08-" + "x" * 300, "meta.name: must be lower-case letters, digits and single hyphens, at most 64"),
    ],
)
def test_an_experiment_name_is_checked_whole_and_by_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, why: str
) -> None:
    path = tmp_path / "e.toml"
    path.write_text(EXPERIMENT.format(name=name))
    code, out, err = cli(capsys, "sweep", str(path), "--out", str(tmp_path / "out"))
    assert (code, out) == (2, "") and one_line(err).startswith(f"error: e.toml: {why}"), err
    assert not (tmp_path / "out").exists()


# -- found by probing the command line with careless values ------------------------


@pytest.mark.parametrize("address", ["tcp://", "tcp://[::1", "tcp://host", "tcp://host:99999", "tcp://a b:1"])
def test_a_malformed_dask_address_is_one_line_before_any_point_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], address: str
) -> None:
    code, out, err = cli(capsys, "sweep", "fast08-table3", "--quick", "--dask", address, "--out", str(tmp_path / "o"))
    assert (code, out) == (2, "") and one_line(err).startswith("error: --dask: must be tcp://HOST:PORT")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--servers", "2", "--blocks", "1", "--pcap", ""],
        ["run", "--servers", "2", "--blocks", "1", "--trace-dir", " "],
        ["validate", "--servers", "1", "--blocks", "1", "--preset", ""],
        ["sweep", "fast08-table3", "--quick", "--out", ""],
        ["read", "127.0.0.1:1", "--stagger", ""],
        ["read", "127.0.0.1:1", "--delayed-ack", ""],
        ["sweep", "fast08-table3", "--quick", "--jobs", "100000"],
    ],
    ids=["pcap", "trace-dir", "preset", "out", "read-stagger", "read-delayed-ack", "jobs"],
)
def test_an_empty_path_or_name_or_a_fork_bomb_of_workers_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, *args)
    assert (code, out) == (2, "") and one_line(err).startswith(f"error: --{args[-2].lstrip('-')}: ")
    assert not list(tmp_path.iterdir()), "nothing written into the current folder"


def test_a_results_root_that_is_a_file_is_refused_before_any_point_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "results"
    file.write_text("")
    code, out, err = cli(capsys, "reproduce", "fast08-table3", "--quick", "--out", str(file))
    assert (code, out) == (2, "") and one_line(err) == f"error: --out: {file} is not a folder\n"
