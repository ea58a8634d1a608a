"""Unit strings: exact parsing, strict rejection with the allowed forms named, exact formatting."""

from __future__ import annotations

import math

import pytest

from incast.units import (
    UnitError,
    format_duration,
    format_rate,
    format_size,
    parse_buffer,
    parse_duration,
    parse_rate,
    parse_size,
    seconds_to_ps,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("100us", 100e-6),
        ("1.5ms", 1.5e-3),
        ("0", 0.0),
        ("2 ns", 2e-9),
        ("1ps", 1e-12),
        ("3s", 3.0),
        ("5µs", 5e-6),  # micro sign
        ("5μs", 5e-6),  # Greek mu
        ("1e-3s", 1e-3),
        (" 200ms ", 0.2),
        (0.25, 0.25),
        (3, 3.0),
        (0, 0.0),
    ],
)
def test_duration_parses_units_and_plain_seconds(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("100", "needs a unit"),
        ("100xs", "ps, ns, us, µs, ms, s"),
        ("1 fortnight", "is not a duration"),
        ("", "is not a duration"),
        ("ms", "is not a duration"),
        ("-1ms", "must not be negative"),
        (-1, "must not be negative"),
        (math.nan, "finite"),
        (math.inf, "finite"),
        ("inf", "is not a duration"),
        (True, "is not a duration"),
        (None, "is not a duration"),
        ("1e99s", "too large"),
        ("1MS", "is not a duration"),
    ],
)
def test_duration_rejects_with_the_allowed_forms(value: object, says: str) -> None:
    with pytest.raises(UnitError, match=says.replace(".", r"\.")):
        parse_duration(value)


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("1Gbps", 10**9),
        ("2.5Mbps", 2_500_000),
        ("1.1Gbps", 1_100_000_000),
        ("10Kbps", 10_000),
        ("1Tbps", 10**12),
        ("9600bps", 9600),
        (1e9, 10**9),
        (100, 100),
    ],
)
def test_rate_is_si_and_exact(text: object, bps: int) -> None:
    assert parse_rate(text) == bps
    assert isinstance(parse_rate(text), int)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("1GBps", "bps, Kbps, Mbps, Gbps, Tbps"),
        ("1gbps", "is not a rate"),
        ("1G", "is not a rate"),
        ("1000", "needs a unit"),
        ("-1Gbps", "must not be negative"),
        ("1.5bps", "whole number of bit/s"),
        (math.inf, "finite"),
    ],
)
def test_rate_rejects(value: object, says: str) -> None:
    with pytest.raises(UnitError, match=says):
        parse_rate(value)


@pytest.mark.parametrize(
    ("text", "nbytes"),
    [
        ("32KiB", 32 * 1024),
        ("1MiB", 2**20),
        ("1GiB", 2**30),
        ("1.5KB", 1500),
        ("1GB", 10**9),
        ("100B", 100),
        ("0.5KiB", 512),
        (1500, 1500),
        (1500.0, 1500),
    ],
)
def test_size_knows_decimal_and_binary_units(text: object, nbytes: int) -> None:
    assert parse_size(text) == nbytes


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("1.5B", "whole number of bytes"),
        ("12", "needs a unit"),
        ("32kib", "B, KB, MB, GB, KiB, MiB, GiB"),
        ("-1KB", "must not be negative"),
        (1.5, "whole number of bytes"),
        ("64pkt", "is not a size"),
    ],
)
def test_size_rejects(value: object, says: str) -> None:
    with pytest.raises(UnitError, match=says):
        parse_size(value)


def test_buffer_is_a_size_or_a_packet_count() -> None:
    assert parse_buffer("64pkt") == ("packets", 64)
    assert parse_buffer("1 pkts") == ("packets", 1)
    assert parse_buffer("32KiB") == 32768
    assert parse_buffer(4096) == 4096


@pytest.mark.parametrize(
    ("value", "says"), [("1.5pkt", "whole number of packets"), ("64 packets", '"64pkt"'), ("pkt", "buffer limit")]
)
def test_buffer_rejects(value: str, says: str) -> None:
    with pytest.raises(UnitError, match=says):
        parse_buffer(value)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (100e-6, "100us"),
        (1.5e-3, "1.5ms"),
        (120.0, "120s"),
        (0.0, "0"),
        (0.2, "200ms"),
        (2e-9, "2ns"),
        (1.234e-12, "1.234ps"),
    ],
)
def test_format_duration_is_readable(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize("seconds", [1e-4, 1.5e-3, 0.1 + 0.2, 1 / 3, 123.456789, 7e-13, 86400.0, 1.000000001])
def test_format_duration_parses_back_exactly(seconds: float) -> None:
    assert parse_duration(format_duration(seconds)) == seconds


@pytest.mark.parametrize("bps", [1, 999, 10**9, 1_500_000, 1_234_567_891, 10**12, 40 * 10**12])
def test_format_rate_parses_back_exactly(bps: int) -> None:
    assert parse_rate(format_rate(bps)) == bps


@pytest.mark.parametrize(
    ("nbytes", "text"), [(32768, "32KiB"), (2**20, "1MiB"), (1500, "1500B"), (2000, "2KB"), (10**6, "1MB")]
)
def test_format_size_picks_an_exact_unit(nbytes: int, text: str) -> None:
    assert format_size(nbytes) == text
    assert parse_size(text) == nbytes


@pytest.mark.parametrize(
    ("seconds", "ps"),
    [
        (1e-4, 100_000_000),
        (1.5e-3, 1_500_000_000),
        (120.0, 120 * 10**12),
        (1e-12, 1),
        (0.0, 0),
        (2.5e-12, 2),
        (3.5e-12, 4),
    ],
)
def test_seconds_to_ps_rounds_to_nearest_exactly(seconds: float, ps: int) -> None:
    assert seconds_to_ps(seconds) == ps
