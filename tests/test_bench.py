"""The real-socket benchmark from Python and the command line: incast.bench, incast serve, incast read.

Everything runs on loopback with ephemeral ports. A "stalling" server is a
plain listener that answers a given number of requests and then goes quiet.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import incast
from incast import bench
from incast.cli import main
from incast.errors import ScenarioError

from conftest import default_sigint

#: The keys ``incast read --json`` shares with ``incast run --json``.
SHARED_KEYS = {"goodput_mbps", "blocks", "bytes_delivered", "block_time_ms", "wall_s"}
HEADER_LEN = 24


def cli(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the command; its exit status, standard output and standard error (a server fixture's log left out)."""
    capfd.readouterr()
    code = main(list(args))
    out, err = capfd.readouterr()
    return code, out, err


class Staller:
    """A listener that answers the first ``answered`` requests of its one connection in full, then reads on silently."""

    def __init__(self, answered: int = 0) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.answered = answered
        self.stalled = threading.Event()  # set once the unanswered request has arrived
        self._conn: socket.socket | None = None
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        self._conn = conn
        for i in range(self.answered + 1):
            header = b""
            while len(header) < HEADER_LEN:
                chunk = conn.recv(HEADER_LEN - len(header))
                if not chunk:
                    return
                header += chunk
            if i == self.answered:
                self.stalled.set()
                return
            conn.sendall(bytes(int.from_bytes(header[16:24], "big")))

    def close(self) -> None:
        self.listener.close()
        self._thread.join(timeout=5)
        if self._conn is not None:
            self._conn.close()


@pytest.fixture
def server() -> Iterator[bench.Server]:
    with bench.Server() as s:
        yield s


@pytest.fixture
def staller() -> Iterator[Staller]:
    s = Staller()
    yield s
    s.close()


@pytest.fixture
def staller_after_two() -> Iterator[Staller]:
    s = Staller(answered=2)
    yield s
    s.close()


def _serve_subprocess(*args: str) -> tuple[subprocess.Popen[str], int]:
    """``incast serve --port 0 ...`` in a child process, and the port it logged."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "incast", "serve", "--port", "0", "--bind", "127.0.0.1", *args],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert line.startswith("listening on 127.0.0.1:"), line
    return proc, int(line.split()[2].rstrip(",").rsplit(":", 1)[1])


def _port_is_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


# -- the Python API -----------------------------------------------------------------


def test_read_returns_every_byte_with_the_run_summary_names(server: bench.Server) -> None:
    r = bench.read([server.address] * 3, sru="64KiB", blocks=10, warmup=2)
    assert (r.status, r.error, r.blocks, r.warmup_blocks) == ("complete", None, 10, 2)
    assert (r.sru_bytes, r.block_bytes, r.bytes_delivered) == (65536, 3 * 65536, 10 * 3 * 65536)
    assert r.goodput_mbps > 0 and r.block_time_ms.p50 <= r.block_time_ms.max
    assert list(r.blocks_table["block"]) == list(range(2, 12))
    assert list(r.connections["bytes_delivered"]) == [10 * 65536] * 3
    assert list(r.connections["bytes_received"]) == [10 * 65536] * 3
    assert r.tcpext["TCPTimeouts"]["delta"] == r.tcpext["TCPTimeouts"]["after"] - r.tcpext["TCPTimeouts"]["before"]
    sim = incast.run(servers=1, blocks=1).to_dict()
    d = r.to_dict()
    assert SHARED_KEYS <= set(sim) & set(d)
    assert set(d["block_time_ms"]) == set(sim["block_time_ms"]) == {"p50", "p99", "max"}
    json.dumps(d, allow_nan=False)


def test_a_block_is_split_over_the_servers_and_the_last_answer_is_named(server: bench.Server) -> None:
    r = bench.read([server.address] * 3, block=1000, blocks=2, max_inflight=1, stagger="200us")
    assert (r.sru_bytes, r.block_bytes) == (None, 1000)
    assert list(r.connections["bytes_delivered"]) == [668, 666, 666]
    assert list(r.blocks_table["last_server"]) == [2, 2]  # one at a time: the third answers last


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"sru": "12 parsecs"}, "sru: '12 parsecs' is not a size"),
        ({"sru": "1KiB", "block": "1MiB"}, "sru: give sru (bytes per server) or block (bytes per block), not both"),
        ({"blocks": 0}, "blocks: must be at least 1"),
        ({"warmup": -1}, "warmup: -1 is not a whole number from 0 up"),
        ({"max_inflight": 0}, "max_inflight: must be at least 1"),
        ({"timeout": "0"}, "timeout: must be more than 0"),
        ({"congestion": "no-such-cc"}, 'congestion: "no-such-cc" cannot be set'),
    ],
)
def test_bad_settings_name_the_parameter(server: bench.Server, settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as e:
        bench.read([server.address], **settings)
    assert str(e.value).startswith(message)


def test_bad_server_names_are_rejected_before_connecting() -> None:
    with pytest.raises(ScenarioError, match=r"^servers: required"):
        bench.read([])
    with pytest.raises(ScenarioError, match=r'^servers: "127.0.0.1:http": port "http" is not a number'):
        bench.read(["127.0.0.1:http"])


def test_a_stalled_server_is_named_with_its_block_and_the_blocks_before_are_kept(
    server: bench.Server, staller_after_two: Staller
) -> None:
    with pytest.raises(bench.ReadError) as e:
        bench.read([server.address, staller_after_two.address], sru="1KiB", blocks=5, timeout="300ms")
    prefix = f"server {staller_after_two.address}, block 2: stalled: 0 of 1024 bytes after the 300ms timeout"
    assert str(e.value) == prefix
    assert (e.value.result.status, e.value.result.blocks, e.value.result.bytes_delivered) == ("failed", 2, 4096)


def test_background_server_rejects_a_count_above_its_maximum(capfd: pytest.CaptureFixture[str]) -> None:
    with bench.Server(max_response="1KiB") as s:
        with pytest.raises(bench.ReadError, match=r"block 0: closed the connection after 0 of 2048 bytes"):
            bench.read([s.address], sru="2KiB", blocks=1)
        assert bench.read([s.address], sru="1KiB", blocks=1).blocks == 1  # still serving
    err = capfd.readouterr().err
    assert "rejected request: count: 2048 bytes requested for block 0, the maximum is 1024; connection closed" in err


# -- incast read --------------------------------------------------------------------


def test_read_json_has_the_shared_keys_and_the_kernels_view(
    capfd: pytest.CaptureFixture[str], server: bench.Server
) -> None:
    code, out, err = cli(capfd, "read", server.address, server.address, "--sru", "32KiB", "--blocks", "4", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert SHARED_KEYS | {"status", "servers", "sru_bytes", "connections", "tcpext", "config"} <= set(d)
    assert (d["source"], d["status"], d["error"]) == ("bench", "complete", None)
    assert (d["blocks"], d["servers"]) == (4, [server.address] * 2)
    assert {"retransmits", "lost", "total_retrans", "rto_us", "rtt_us"} <= set(d["connections"][0])
    assert {"TCPTimeouts", "TCPLossProbes", "RetransSegs"} <= set(d["tcpext"])
    assert d["config"]["socket"] == {
        "nodelay": True,
        "quickack": False,
        "congestion": None,
        "rcvbuf": None,
        "sndbuf": None,
    }


def test_read_prints_a_readable_summary_from_a_servers_file(
    capfd: pytest.CaptureFixture[str], server: bench.Server, tmp_path: Any
) -> None:
    listing = tmp_path / "servers.txt"
    listing.write_text(f"# rack 1\n{server.address}\n\n{server.address}  # again\n")
    args = ["--blocks", "3", "--delayed-ack", "off", "--stagger", "50us", "--congestion", "reno", "--rcvbuf", "1MiB"]
    code, out, _ = cli(capfd, "read", "--servers-file", str(listing), *args)
    assert code == 0
    heading = "2 servers, 256KiB SRU, 0 warm-up blocks, stagger 50us, delayed ACK off, congestion reno, rcvbuf 1MiB\n"
    assert out.startswith(heading), out
    assert (
        re.search(r"\ngoodput +[0-9.]+ Mbps", out) and re.search(r"\nblock time +p50 ", out) and "TCPTimeouts +" in out
    )
    assert re.search(rf"slowest block +block \d+, [0-9.]+ ms, last answer from {server.address}", out), out
    assert out.count(f"│ {server.address} ") == 2  # one table row per server listed


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--max-inflight", "0"], "error: max_inflight: must be at least 1"),
        (["--sru", "1parsec"], "error: sru: '1parsec' is not a size"),
        (["--delayed-ack", "maybe"], "error: delayed_ack: 'maybe' is not on or off"),
        (["--blocks", "many"], "error: --blocks: "),
        (["--stagger", "-1ms"], "error: stagger: '-1ms' is not a duration: it must not be negative"),
        (["--sru", "1e30B"], "error: sru: '1e30B' is more than the largest allowed, 18446744073709551615 bytes"),
        (["--rcvbuf", "4GiB"], "error: rcvbuf: '4GiB' is more than the largest allowed, 2147483647 bytes"),
    ],
)
def test_bad_read_options_exit_2_with_one_line(
    capfd: pytest.CaptureFixture[str], server: bench.Server, args: list[str], line: str
) -> None:
    code, out, err = cli(capfd, "read", server.address, *args)
    assert (code, out) == (2, "")
    assert err.startswith(line) and err.count("\n") == 1, err


def test_read_without_servers_or_with_a_missing_file_exits_2(capfd: pytest.CaptureFixture[str]) -> None:
    assert cli(capfd, "read") == (2, "", "error: servers: required; give HOST[:PORT]... or --servers-file FILE\n")
    code, _, err = cli(capfd, "read", "--servers-file", "/nonexistent/servers.txt")
    assert (code, err) == (2, "error: /nonexistent/servers.txt: no such file or directory\n")


def test_a_stalled_server_prints_partial_results_then_one_line_and_exits_1(
    capfd: pytest.CaptureFixture[str], server: bench.Server, staller_after_two: Staller
) -> None:
    args = ["read", server.address, staller_after_two.address, "--sru", "1KiB", "--timeout", "300ms", "--json"]
    code, out, err = cli(capfd, *args)
    assert code == 1
    d = json.loads(out)
    assert (d["status"], d["blocks"]) == ("failed", 2)
    expected = f"server {staller_after_two.address}, block 2: stalled: 0 of 1024 bytes after the 300ms timeout"
    assert d["error"] == expected
    assert err == f"error: {expected}\n"


def test_a_refused_connection_names_the_server(capfd: pytest.CaptureFixture[str]) -> None:
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]  # closed on leaving the block: nothing listens there any more
    code, out, err = cli(capfd, "read", f"127.0.0.1:{port}")
    assert code == 1
    assert out.startswith("1 servers, 256KiB SRU, 0 warm-up blocks — failed, partial results\n")
    assert err.startswith(f"error: server 127.0.0.1:{port}: connect: ") and err.count("\n") == 1


def test_ctrl_c_prints_the_partial_results(server: bench.Server, staller_after_two: Staller) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "incast", "read", server.address, staller_after_two.address]
        + ["--sru", "1KiB", "--timeout", "60s", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    try:
        assert staller_after_two.stalled.wait(timeout=30), "the read never reached the stalling block"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode == 130
    d = json.loads(out)
    assert (d["status"], d["blocks"], d["error"]) == ("interrupted", 2, None)
    assert err == "error: interrupted after 2 measured blocks\n"


# -- incast serve -------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_stops_cleanly_on_a_signal_and_frees_its_port(sig: signal.Signals) -> None:
    proc, port = _serve_subprocess("--max-response", "1MiB")
    try:
        r = bench.read([f"127.0.0.1:{port}"], sru="1MiB", blocks=3)
        assert r.blocks == 3
        with pytest.raises(bench.ReadError):  # above --max-response: this connection only is closed
            bench.read([f"127.0.0.1:{port}"], sru="2MiB", blocks=1)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    lines = err.splitlines()
    assert any("rejected request: count: 2097152 bytes requested for block 0" in line for line in lines), err
    shutdown = (
        r"shutdown: 2 connections, 3 requests, 3145728 bytes served, 1 connections rejected, \d+ segments retransmitted"
    )
    assert re.fullmatch(shutdown, lines[-1]), lines[-1]
    assert _port_is_free(port)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--max-response", "lots"], "error: max_response: 'lots' is not a size"),
        (["--max-response", "1e30B"], "error: max_response: '1e30B' is more than the largest allowed"),
        (["--port", "70000"], "error: port: 70000 is not a port number from 0 to 65535"),
        (["--congestion", "no-such-cc"], 'error: congestion: "no-such-cc" cannot be set'),
        (["--bind", "nowhere"], 'error: bind: "nowhere:7470" is not an IP address and port'),
    ],
)
def test_bad_serve_options_exit_2_with_one_line(capfd: pytest.CaptureFixture[str], args: list[str], line: str) -> None:
    code, out, err = cli(capfd, "serve", *args)
    assert (code, out) == (2, "")
    assert err.startswith(line) and err.count("\n") == 1, err


def test_serve_on_a_busy_port_exits_1_naming_the_address(capfd: pytest.CaptureFixture[str]) -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        code, out, err = cli(capfd, "serve", "--bind", "127.0.0.1", "--port", str(port))
    assert (code, out) == (1, "")
    assert err.startswith(f"error: cannot listen on 127.0.0.1:{port}: ") and err.count("\n") == 1, err
