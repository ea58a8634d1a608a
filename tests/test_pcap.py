"""Packet capture: ``trace.pcap``, ``Result.write_pcap`` and ``incast run --pcap``, read back as pcap files.

The files are parsed here with ``struct`` (classic libpcap, nanosecond magic,
Ethernet II / IPv4 / TCP headers and TCP options, the payload cut off), so the
test depends on no capture library and checks every field it reads.
"""

from __future__ import annotations

import struct
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

import pytest

import incast
from incast.cli import main

SMALL = ["--servers", "2", "--blocks", "2", "--sru", "64KiB"]
ISN_TO_SERVER, ISN_TO_CLIENT = 0x1000_0000, 0x2000_0000
ACK, PSH = 0x10, 0x08


class Pkt(NamedTuple):
    t_ns: int
    orig_len: int
    src: str
    dst: str
    sport: int
    dport: int
    seq: int
    ack: int
    flags: int
    window: int
    payload: int
    ts: tuple[int, int] | None = None
    sack: tuple[tuple[int, int], ...] = ()


def _options(raw: bytes) -> tuple[tuple[int, int] | None, tuple[tuple[int, int], ...]]:
    """Timestamps (TSval, TSecr) and SACK blocks from TCP option bytes (RFC 7323 §3, RFC 2018 §3)."""
    ts, sack, at = None, [], 0
    while at < len(raw):
        kind = raw[at]
        if kind == 1:  # NOP
            at += 1
            continue
        length = raw[at + 1]
        body = raw[at + 2 : at + length]
        if kind == 8:
            assert length == 10
            ts = struct.unpack("!II", body)
        elif kind == 5:
            assert (length - 2) % 8 == 0
            sack = [struct.unpack("!II", body[i : i + 8]) for i in range(0, length - 2, 8)]
        else:
            raise AssertionError(f"unexpected TCP option kind {kind}")
        at += length
    return ts, tuple(sack)


def _checksum(data: bytes, start: int = 0) -> int:
    """RFC 1071 one's complement sum, folded (0xffff over a header holding its own checksum)."""
    if len(data) % 2:
        data += b"\0"
    s = start + sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def read_pcap(path: Path) -> list[Pkt]:
    """Every record of a classic nanosecond pcap file, with its IPv4 and TCP checksums verified."""
    data = path.read_bytes()
    magic, major, minor, _, _, snaplen, linktype = struct.unpack("<IHHiIII", data[:24])
    assert (magic, major, minor, snaplen, linktype) == (0xA1B23C4D, 2, 4, 262144, 1)
    out, at = [], 24
    while at < len(data):
        sec, nsec, incl, orig = struct.unpack("<IIII", data[at : at + 16])
        assert nsec < 1_000_000_000 and 54 <= incl <= 94 and orig >= incl
        frame = data[at + 16 : at + 16 + incl]
        at += 16 + incl
        assert struct.unpack("!H", frame[12:14])[0] == 0x0800
        ip, tcp = frame[14:34], frame[34:]
        assert ip[0] == 0x45 and ip[8] == 64 and ip[9] == 6
        total = struct.unpack("!H", ip[2:4])[0]
        assert total == orig - 14
        assert _checksum(ip) == 0xFFFF, "IPv4 header checksum"
        tcp_len = total - 20
        pseudo = _checksum(ip[12:20] + struct.pack("!HH", 6, tcp_len))
        assert _checksum(tcp + bytes(tcp_len - len(tcp)), pseudo) == 0xFFFF, "TCP checksum"
        sport, dport, seq, ack, off, flags, window = struct.unpack("!HHIIBBH", tcp[:16])
        header = (off >> 4) * 4
        assert header == len(tcp) == incl - 34, "data offset counts the options"
        ts, sack = _options(tcp[20:])
        src, dst = ".".join(map(str, ip[12:16])), ".".join(map(str, ip[16:20]))
        t_ns = sec * 1_000_000_000 + nsec
        out.append(Pkt(t_ns, orig, src, dst, sport, dport, seq, ack, flags, window, tcp_len - header, ts, sack))
    assert at == len(data)
    return out


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pcap") / "run"
    assert main(["run", *SMALL, "--pcap", str(out)]) == 0
    return out


def test_one_file_per_host_and_nothing_else(captured: Path) -> None:
    assert sorted(p.name for p in captured.iterdir()) == ["client.pcap", "server-0.pcap", "server-1.pcap"]


def test_timestamps_are_monotone_in_every_file(captured: Path) -> None:
    for path in captured.iterdir():
        times = [p.t_ns for p in read_pcap(path)]
        assert times and times == sorted(times), path.name


def test_server_sees_requests_then_answers_with_increasing_sequence_numbers(captured: Path) -> None:
    pkts = read_pcap(captured / "server-1.pcap")
    server, client = "10.0.0.3", "10.0.0.1"
    assert {(p.src, p.dst) for p in pkts} == {(server, client), (client, server)}
    first = pkts[0]
    # Block 0 starts with the client's request: the server first receives it.
    assert (first.src, first.dport, first.sport) == (client, 5001, 40001)
    assert first.payload > 0 and first.seq == ISN_TO_SERVER + 1 and first.flags & ACK
    data = [p for p in pkts if p.src == server and p.payload > 0]
    assert data[0].seq == ISN_TO_CLIENT + 1
    # Each segment either carries the next new bytes or retransmits earlier ones.
    end = ISN_TO_CLIENT + 1
    for p in data:
        assert p.seq == end or p.seq + p.payload <= end, p
        end = max(end, p.seq + p.payload)
    assert end - (ISN_TO_CLIENT + 1) == 2 * 64 * 1024, "two blocks of 64 KiB"
    assert all(p.flags & ACK for p in pkts)
    assert max(data, key=lambda p: p.seq).flags & PSH, "the last segment of a response empties the send buffer"
    # The client's ACKs of the response, cumulative and never going back (the run
    # stops at the last block's last byte, before its final ACK is sent or arrives).
    acks = [p.ack for p in pkts if p.src == client and p.payload == 0]
    assert acks and acks == sorted(acks) and ISN_TO_CLIENT + 1 < acks[-1] <= end


def test_client_sees_both_ends_of_every_packet_it_sent_or_received(captured: Path) -> None:
    client = read_pcap(captured / "client.pcap")
    servers = read_pcap(captured / "server-0.pcap") + read_pcap(captured / "server-1.pcap")
    # The same headers at both capture points; only the client's last ACKs may
    # still be on their way when the run stops.
    ours, theirs = {p._replace(t_ns=0) for p in client}, {p._replace(t_ns=0) for p in servers}
    assert theirs <= ours
    assert all(p.src == "10.0.0.1" and p.payload == 0 for p in ours - theirs)
    assert {p.dport for p in client if p.dst == "10.0.0.1"} == {40000, 40001}


def test_capture_is_off_by_default_and_does_not_change_the_result(tmp_path: Path) -> None:
    plain = incast.run(servers=2, blocks=2, workload={"sru": "64KiB"})
    with pytest.raises(ValueError, match="trace.pcap"):
        plain.write_pcap(tmp_path)
    cap = incast.run(servers=2, blocks=2, workload={"sru": "64KiB"}, trace={"pcap": True})
    ours, theirs = plain.to_dict(), cap.to_dict()
    for d in (ours, theirs):
        d.pop("wall_s"), d.pop("events_per_s"), d.pop("scenario")
    assert ours == theirs
    paths = cap.write_pcap(tmp_path / "api")
    assert [p.name for p in paths] == ["client.pcap", "server-0.pcap", "server-1.pcap"]
    assert sorted(p.name for p in (tmp_path / "api").iterdir()) == [p.name for p in paths], "no temporary left"


def test_timestamps_start_when_the_run_began_or_at_the_start_given(tmp_path: Path) -> None:
    """A capture tool shows the date the run was made, not 1970-01-01; a fixed
    ``start`` moves every record by the same amount and gives the same bytes on
    every run."""
    before = datetime.now(timezone.utc)
    cap = incast.run(servers=2, blocks=2, workload={"sru": "64KiB"}, trace={"pcap": True})
    assert before <= cap.started_at <= datetime.now(timezone.utc)
    dated = read_pcap(cap.write_pcap(tmp_path / "dated")[0])
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    simulated = read_pcap(cap.write_pcap(tmp_path / "sim", start=epoch)[0])
    by_ns = round((cap.started_at - epoch).total_seconds() * 1e6) * 1000
    assert [p.t_ns - by_ns for p in dated] == [p.t_ns for p in simulated]
    assert simulated[0].t_ns < 10**9 < by_ns
    again = incast.run(servers=2, blocks=2, workload={"sru": "64KiB"}, trace={"pcap": True})
    fixed = datetime(2026, 1, 1, tzinfo=timezone.utc)
    a, b = cap.write_pcap(tmp_path / "a", start=fixed), again.write_pcap(tmp_path / "b", start=fixed)
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    with pytest.raises(ValueError, match="before 1970"):
        cap.write_pcap(tmp_path / "old", start=datetime(1969, 12, 31, tzinfo=timezone.utc))
    with pytest.raises(ValueError, match="timezone"):
        cap.write_pcap(tmp_path / "naive", start=datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="2106"):
        cap.write_pcap(tmp_path / "late", start=datetime(2107, 1, 1, tzinfo=timezone.utc))
    assert not (tmp_path / "old").exists() and not (tmp_path / "late").exists()


def test_bad_pcap_directory_is_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    code = main(["run", *SMALL, "--pcap", str(blocker / "sub")])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_server_list_writes_one_directory_per_count(tmp_path: Path) -> None:
    assert main(["run", "--servers", "1,2", "--blocks", "1", "--sru", "8KiB", "--pcap", str(tmp_path), "--json"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["servers=1", "servers=2"]
    assert sorted(p.name for p in (tmp_path / "servers=1").iterdir()) == ["client.pcap", "server-0.pcap"]


def test_sack_and_timestamps_options_are_in_the_capture(tmp_path: Path) -> None:
    """RFC 7323 / RFC 2018 on the wire: with SACK and timestamps on, every
    packet carries TSval/TSecr, segments carry MSS − 12 bytes, and while a
    response has holes the client's ACKs carry SACK blocks above their ACK
    number, newest first."""
    loss = ["--servers", "8", "--blocks", "3", "--sru", "128KiB", "--buffer", "16pkt", "--tcp", "sack"]
    assert main(["run", *loss, "--set", "tcp.timestamps=true", "--pcap", str(tmp_path)]) == 0
    client = read_pcap(tmp_path / "client.pcap")
    assert all(p.ts is not None for p in client)
    assert max(p.payload for p in client) == 1460 - 12
    acks = [p for p in client if p.src == "10.0.0.1" and p.payload == 0]
    sacked = [p for p in acks if p.sack]
    assert sacked, "a 16-packet port with 8 servers drops, so some ACKs report holes"
    for p in sacked:
        assert len(p.sack) <= 3, "three blocks beside the timestamps option"
        for left, right in p.sack:
            assert (left - p.ack) % 2**32 < 2**31 and left != p.ack, "a block lies above the cumulative ACK"
            assert (right - left) % 2**32 > 0
    plain = tmp_path / "plain"
    assert main(["run", *loss[:-2], "--pcap", str(plain)]) == 0
    assert all(p.ts is None and not p.sack for p in read_pcap(plain / "client.pcap"))
