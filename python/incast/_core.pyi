"""Native core of the incast package (private: import ``incast`` instead).

Hand-written stub of ``crates/incast-py/src/lib.rs``; checked against the
compiled module with ``python -m mypy.stubtest incast._core``.
"""

from typing import final

__all__ = [
    "BenchServer",
    "IncastError",
    "ScenarioError",
    "SimulationError",
    "apply_overrides_json",
    "bench_read_json",
    "bench_serve",
    "bench_start_server",
    "engine_build",
    "engine_version",
    "flow_sizes_cdf",
    "panic_for_test",
    "pcap_shift",
    "resolve_json",
    "run",
    "schema_json",
    "summary_figures_json",
]

_Column = tuple[str, str, list[str], bytes]

def run(scenario_json: str) -> tuple[str, list[_Column], list[tuple[str, list[_Column]]], list[bytes]]:
    """Run one scenario given in the user's TOML shape as JSON.

    Returns the run result as JSON with its timeout rows and traces left out;
    those rows as columns, each ``(name, numpy dtype, labels, little-endian
    values)`` (``labels`` non-empty for a column of one-byte codes into them,
    ``client`` ``-1`` for a background flow's timeout); each trace that was on
    as ``(name, columns)`` (``ssthresh_bytes`` ``-1`` while unset, ``srtt_us``
    NaN before the first sample); and one pcap file per host (client first,
    then server 0, 1, ...; empty when ``trace.pcap`` is off).
    Settings left out take their defaults. Raises ScenarioError (naming the
    dotted setting) for a scenario that is not valid and SimulationError if
    the engine fails. Releases the GIL while it runs and encodes.
    """

def apply_overrides_json(scenario_json: str, overrides_json: str) -> str:
    """Apply a JSON list of ``[dotted path, value]`` pairs to a scenario in the user's shape; nothing is resolved.

    Raises ScenarioError naming an unknown path.
    """

def resolve_json(scenario_json: str) -> str:
    """Read a scenario in the user's shape; return JSON ``{"toml", "si", "hash", "host_rtt_s"}``.

    ``toml`` is the canonical form in human units, ``si`` the same settings in
    plain SI numbers, ``hash`` its SHA-256, ``host_rtt_s`` the seconds of
    ``link.rtt`` the hosts take (what the links' propagation leaves). Raises
    ScenarioError naming the dotted setting.
    """

def schema_json() -> str:
    """Every setting as a JSON list of ``{"name", "kind", "default", "allowed", "none", "doc"}``, in order."""

def summary_figures_json() -> str:
    """The name of every single-number figure of a run's summary as a JSON list (parts as ``figure.part``)."""

def pcap_shift(file: bytes, by_ns: int) -> bytes:
    """``file`` (one pcap file from :func:`run`) with every timestamp ``by_ns`` nanoseconds later.

    Raises ``ValueError`` if a timestamp would pass 2106-02-07 or ``file`` is not such a capture.
    """

def panic_for_test(message: str) -> None:
    """Panic with ``message`` inside the guard: raises SimulationError (the test suite's check of the guard)."""

def engine_version() -> str:
    """Version of the engine this module was built from."""

def flow_sizes_cdf(name: str) -> str:
    """The data file of a published flow-size distribution (``traffic.sizes``), as the engine ships it."""

def engine_build() -> str:
    """The engine this module was built from: its version, ``+``, and a 16-hex-digit digest of its source."""

def bench_read_json(config_json: str) -> str:
    """Read synchronized blocks from real servers (``incast-bench``); the settings and the report are JSON.

    Raises ScenarioError for invalid settings (the message starts with the
    field). Every other outcome is a report whose ``status`` is ``complete``,
    ``failed`` (with ``error``) or ``interrupted`` (Ctrl-C). Releases the GIL
    while reading; an exception other than KeyboardInterrupt raised by a
    signal handler ends the read and propagates.
    """

def bench_serve(bind: str, config_json: str) -> None:
    """Serve the benchmark protocol on ``bind`` (``host:port``) until a signal handler raises; then return.

    ``config_json`` holds ``max_response``, ``max_connections``,
    ``idle_timeout`` (seconds) and ``socket``. Raises ScenarioError for bad
    settings and OSError when the address cannot be bound. Log lines go to
    standard error. Releases the GIL while serving.
    """

def bench_start_server(bind: str, config_json: str) -> BenchServer:
    """Start a benchmark server on ``bind`` (port 0 picks a free one) on a background thread.

    Errors as for :func:`bench_serve`.
    """

@final
class BenchServer:
    """A benchmark server running on a background thread (``bench_start_server``)."""

    @property
    def address(self) -> str:
        """The ``host:port`` the server listens on."""

    def stop(self) -> None:
        """Stop serving and close every connection; stopping twice does nothing."""

class IncastError(Exception):
    """Base class of every error the incast engine raises."""

class ScenarioError(IncastError):
    """A scenario is malformed or a field is out of range; the message starts with the field's dotted path."""

class SimulationError(IncastError):
    """The engine failed while running a valid scenario (a bug: please report it with the scenario)."""
