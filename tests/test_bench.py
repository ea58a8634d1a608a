"""The real-socket benchmark from Python and the command line: incast.bench, incast serve, incast read.

Everything runs on loopback with ephemeral ports. A "stalling" server is a
plain listener that answers a given number of requests and then goes quiet.
"""

from __future__ import annotations

import json
import random
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
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


def _serve_subprocess(*args: str, preexec_fn: Callable[[], None] | None = None) -> tuple[subprocess.Popen[str], int]:
    """``incast serve --port 0 ...`` in a child process, and the port it logged."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "incast", "serve", "--port", "0", "--bind", "127.0.0.1", *args],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec_fn,
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
        reason = "count: 2048 bytes requested for block 0, the maximum is 1024"
        with pytest.raises(bench.ReadError) as e:
            bench.read([s.address], sru="2KiB", blocks=1)
        assert str(e.value) == f"server {s.address}, block 0: refused: {reason}"
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


def test_read_takes_the_scenario_options_words_and_starts_blocks_until_a_time(
    capfd: pytest.CaptureFixture[str], server: bench.Server
) -> None:
    """--delayed-ack linux and --max-inflight all mean what they mean in incast run; --start-until
    starts no block after its time and lets the last one finish."""
    args = ["--sru", "16KiB", "--start-until", "50ms", "--max-inflight", "all", "--delayed-ack", "linux", "--json"]
    code, out, err = cli(capfd, "read", server.address, *args)
    assert code == 0, err
    d = json.loads(out)
    assert (d["status"], d["config"]["duration"], d["config"]["max_inflight"]) == ("complete", 0.05, None)
    assert d["config"]["socket"]["quickack"] is False
    assert d["blocks"] >= 1


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
        (["--delayed-ack", "maybe"], "error: delayed_ack: the kernel has linux (its own, the default) or off, got"),
        (["--delayed-ack", "40ms"], "error: delayed_ack: the kernel has linux (its own, the default) or off, got"),
        (["--blocks", "many"], "error: blocks: 'many' is not a whole number"),
        (["--start-until", "0"], "error: start_until: must be more than 0, got '0'"),
        (["--start-until", "2"], "error: start_until: '2' needs a unit"),
        (["--start-until", "1s", "--blocks", "3"], "error: start_until: give --blocks or --start-until, not both"),
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
        r"shutdown: 2 connections, 3 requests, 3145728 bytes served, 1 connections rejected, "
        r"0 refused \(too many open\), 0 closed idle, 0 accept errors, \d+ segments retransmitted; "
        r"kernel RTT \d+ us, RTTVAR \d+ us and RTO \d+ us on average \(RTO at most \d+ us, min_rtt at least \d+ us\) "
        r"over 2 requests after a connection's first"
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
        (["--max-connections", "0"], "error: max_connections: 0 is not from 1 to 65536"),
        (["--max-connections", "65537"], "error: max_connections: 65537 is not from 1 to 65536"),
        (["--max-connections", "many"], "error: --max-connections: "),
        (["--idle-timeout", "0"], "error: idle_timeout: must be more than 0 and at most one day"),
        (["--idle-timeout", "2 days"], "error: idle_timeout: '2 days' is not a duration"),
        (["--idle-timeout", "1e30s"], "error: idle_timeout: must be more than 0 and at most one day"),
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


def test_server_settings_are_checked_naming_the_parameter() -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"max_connections": 0}, "max_connections: 0 is not from 1 to 65536"),
        ({"max_connections": True}, "max_connections: True is not a whole number"),
        ({"idle_timeout": "0"}, "idle_timeout: must be more than 0 and at most one day"),
        ({"idle_timeout": 86_401}, "idle_timeout: must be more than 0 and at most one day"),
        ({"idle_timeout": "a while"}, "idle_timeout: 'a while' is not a duration"),
    ]
    for settings, message in cases:
        with pytest.raises(ScenarioError) as e:
            bench.Server(**settings)
        assert str(e.value).startswith(message), str(e.value)
    with bench.Server(max_connections=1, idle_timeout="250ms") as s:
        assert bench.read([s.address], sru="1KiB", blocks=2).blocks == 2


def test_read_prints_the_reason_a_server_refuses(capfd: pytest.CaptureFixture[str]) -> None:
    proc, port = _serve_subprocess()
    try:
        code, _, err = cli(capfd, "read", f"127.0.0.1:{port}", "--sru", "100MiB", "--blocks", "1")
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert code == 1
    reason = "refused: count: 104857600 bytes requested for block 0, the maximum is 67108864"
    assert err == f"error: server 127.0.0.1:{port}, block 0: {reason}\n"


# -- incast serve under a flood -----------------------------------------------------------


class Serving:
    """``incast serve`` in a child process under an open-file limit; its log lines are drained into ``lines``."""

    def __init__(self, nofile: int, *args: str) -> None:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        limit = nofile if hard == resource.RLIM_INFINITY else min(nofile, hard)

        def limit_descriptors() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

        self.proc, port = _serve_subprocess(*args, preexec_fn=limit_descriptors)
        self.address = f"127.0.0.1:{port}"
        self.lines: list[str] = []
        self._drain = threading.Thread(target=self._read_log, daemon=True)
        self._drain.start()

    def _read_log(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def status(self, field: str) -> int:
        """A number from ``/proc/PID/status`` (``Threads``; ``VmRSS`` in KiB)."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise KeyError(field)

    def stop(self) -> str:
        """SIGTERM, then the last log line (the shutdown summary)."""
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self._drain.join(timeout=30)
        assert self.proc.stderr is not None
        self.proc.stderr.close()
        assert self.proc.returncode == 0, self.lines
        return self.lines[-1].rstrip("\n")


class Peak:
    """Samples a server's threads and resident memory every 10 ms on a thread of its own."""

    def __init__(self, server: Serving) -> None:
        self.threads = self.rss_kib = 0
        self._server, self._done = server, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.wait(0.01):
            try:
                self.threads = max(self.threads, self._server.status("Threads"))
                self.rss_kib = max(self.rss_kib, self._server.status("VmRSS"))
            except (OSError, KeyError):
                return

    def stop(self) -> None:
        self._done.set()
        self._thread.join(timeout=5)


def _connections(
    address: str, n: int, first: Callable[[socket.socket, int], None] | None = None
) -> list[socket.socket]:
    """``n`` connections to ``address``, each sent what ``first(sock, i)`` sends."""
    host, port = address.rsplit(":", 1)
    socks = []
    try:
        for i in range(n):
            s = socket.create_connection((host, int(port)), timeout=10)
            socks.append(s)
            if first is not None:
                first(s, i)
    except BaseException:
        _close(socks)
        raise
    return socks


def _close(socks: list[socket.socket]) -> None:
    for s in socks:
        s.close()


def _until_closed(s: socket.socket) -> bytes:
    """What the server sends until it closes ``s`` (10 s at most)."""
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    return data


def _header(block: int, count: int, magic: bytes = b"INCB") -> bytes:
    return magic + (1).to_bytes(2, "big") + bytes(2) + block.to_bytes(8, "big") + count.to_bytes(8, "big")


def _refusal(data: bytes) -> str | None:
    """The reason of a refusal frame (``docs/PROTOCOL.md``), or None when ``data`` is not one."""
    if data[:4] != b"INCE":
        return None
    length = int.from_bytes(data[4:8], "big")
    assert len(data) == 8 + length, data
    return data[8:].decode()


@pytest.fixture
def enough_descriptors() -> Iterator[None]:
    """This process opens about 600 sockets at once: raise its soft open-file limit if it is lower."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 2048 if hard == resource.RLIM_INFINITY else min(2048, hard)
    if want < 1024:
        pytest.skip(f"the open-file limit ({hard}) is too low for the flood")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_serve_outlives_a_flood_under_1024_descriptors(enough_descriptors: None) -> None:
    """2,000 connections: 600 idle at once (above the 512 the server serves), 500 half-sent headers, 500
    closed or reset at once, 200 garbage headers, 100 clients that never read their answer, 100 normal
    ones. Then a normal read completes, within 512 + a few threads and 200 MiB."""
    server = Serving(1024, "--idle-timeout", "1s")
    peak = Peak(server)
    started = time.monotonic()
    try:
        # 600 idle connections: 512 served until the idle timeout closes them, the rest refused at once.
        idle = _connections(server.address, 600)
        try:
            answers = [_until_closed(s) for s in idle]
        finally:
            _close(idle)
        refusals = [r for r in map(_refusal, answers) if r is not None]
        assert refusals and len(refusals) == len([a for a in answers if a]), answers
        assert all(r.startswith("too many connections: 512 open") for r in refusals), refusals[0]

        # Half-sent headers, in two waves: closed by the idle timeout, nothing sent back.
        for wave in range(2):
            half = _connections(server.address, 250, lambda s, i: s.sendall(_header(i, 1024)[: 1 + i % 23]))
            try:
                assert all(_until_closed(s) == b"" for s in half), f"wave {wave}"
            finally:
                _close(half)

        # Closed, or reset (SO_LINGER 0), right after connecting.
        linger = (1).to_bytes(4, "little") + (0).to_bytes(4, "little")
        _close(_connections(server.address, 300))
        _close(
            _connections(server.address, 200, lambda s, i: s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger))
        )

        # Garbage headers (the same every run): each refused with the field at fault.
        garbage = _connections(server.address, 200, lambda s, i: s.sendall(random.Random(i).randbytes(24)))
        try:
            reasons = [_refusal(_until_closed(s)) for s in garbage]
        finally:
            _close(garbage)
        assert all(r is not None and r.split(":")[0] in ("magic", "version", "flags", "count") for r in reasons)

        # Clients that ask for 32 MiB and never read it: dropped by the write timeout, which ends their threads.
        base = server.status("Threads")
        deaf = _connections(server.address, 100, lambda s, i: s.sendall(_header(i, 32 << 20)))
        try:
            assert _wait(lambda: server.status("Threads") >= base + 50), "the deaf clients were never served"
            assert _wait(lambda: server.status("Threads") <= base + 5), "the deaf clients' threads are still there"
        finally:
            _close(deaf)

        # Normal clients, one request each.
        def one_request(s: socket.socket, i: int) -> None:
            s.sendall(_header(i, 1000))
            assert len(_until_closed_or(s, 1000)) == 1000

        _close(_connections(server.address, 100, one_request))

        result = bench.read([server.address] * 4, sru="256KiB", blocks=20, timeout="10s")
        assert (result.status, result.blocks) == ("complete", 20)
        assert server.proc.poll() is None
        elapsed = time.monotonic() - started
    finally:
        peak.stop()
        died = server.proc.poll()
        shutdown = server.stop()  # the summary, or a failure with the log
    assert died is None, f"incast serve died: status {died}; log: {server.lines}"
    print(f"flood: {elapsed:.1f} s, peak {peak.threads} threads, peak RSS {peak.rss_kib / 1024:.1f} MiB")
    assert peak.threads <= 512 + 8, peak.threads
    assert peak.rss_kib < 200 * 1024, peak.rss_kib
    counts = dict((v, int(k)) for k, v in re.findall(r"(\d+) ([a-z ]+?)(?:,|$| \()", shutdown))
    assert counts["refused"] == len(refusals) and counts["connections rejected"] == 200, shutdown
    # Idle, half-sent and deaf connections; up to 5 deaf ones may still be open when the test
    # closes them (the wait above stops at base + 5 threads), and those are not counted.
    assert counts["closed idle"] >= 512 + 500 + 100 - 5, shutdown
    # The log stays short however many clients misbehave: a few lines per 5 s window and kind.
    assert len(server.lines) < 60, len(server.lines)


def _wait(condition: Callable[[], bool], seconds: float = 30) -> bool:
    """Whether ``condition`` became true within ``seconds`` (polled every 10 ms)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _until_closed_or(s: socket.socket, want: int) -> bytes:
    data = b""
    while len(data) < want and (chunk := s.recv(want - len(data))):
        data += chunk
    return data


def test_serve_backs_off_when_out_of_descriptors_and_recovers(enough_descriptors: None) -> None:
    """--max-connections above what ulimit -n allows: failed accepts are retried and logged at a bounded rate."""
    server = Serving(128, "--idle-timeout", "1s", "--max-connections", "1000")
    try:
        warning = "warning: max connections 1000 is more than the open-file limit (128, ulimit -n)"
        assert _wait(lambda: any(line.startswith(warning) for line in server.lines), 10), server.lines
        idle = _connections(server.address, 300)
        try:
            assert all(_until_closed(s) == b"" for s in idle)  # each served in turn, then closed idle
        finally:
            _close(idle)
        result = bench.read([server.address], sru="64KiB", blocks=5, timeout="10s")
        assert result.blocks == 5 and server.proc.poll() is None
    finally:
        shutdown = server.stop()
    accept_errors = re.search(r"(\d+) accept errors", shutdown)
    assert accept_errors is not None and int(accept_errors.group(1)) > 0, shutdown
    logged = [line for line in server.lines if line.startswith("accept: ")]
    assert 1 <= len(logged) <= 3 and "Too many open files" in logged[0], logged
