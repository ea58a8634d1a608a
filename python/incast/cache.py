"""The point cache of a sweep: one JSON file per (point, seed), bound to what produced it.

An entry ``<cache>/<key>.json`` holds the point's key (:func:`point_key`),
the scenario's hash, the engine build (its version and a digest of its source,
:func:`incast._core.engine_build`), the resolved scenario, the metrics,
the seconds they took, and ``mac``: HMAC-SHA256 (RFC 2104) under this user's
cache key over the key, the scenario hash, the engine build, the metrics and
the seconds. A checksum anyone can recompute would let an edited number
through; the MAC cannot be recomputed without the key, so an entry edited,
copied from another user or written by another engine fails and is
recomputed with a warning; a point an engine of other source computed has
another key and is never read. An entry is also refused if it is not a regular
file, is larger than :data:`~incast.files.MAX_FILE_BYTES`, nests too deep, or
holds a metric that is infinite, negative, NaN where the engine always gives
a number, or goodput above what the link carries.

The key is 32 random bytes created on first use in
``$XDG_CONFIG_HOME/incast/cache-key`` (``~/.config/incast/cache-key`` when
``XDG_CONFIG_HOME`` is unset), mode 0600 in a 0700 folder. Deleting it makes
a new one; every cached point is then recomputed once. Where it cannot be
created, sweeps run without the cache, with one warning.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import secrets
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from incast._core import engine_build
from incast.errors import ScenarioError
from incast.experiment import METRICS, TIMEOUT_FRACTIONS, Point
from incast.files import read_bytes, read_json
from incast.scenario import Scenario

__all__ = ["KEY_BYTES", "PointCache", "key_path", "point_key"]

#: Length of the cache key, in bytes (HMAC-SHA256's block is 64; RFC 2104 §3 asks at least the output's 32).
KEY_BYTES = 32

#: Metrics the engine leaves undefined (NaN) when there is nothing to measure: no blocks, no timeouts, Rude off.
#: The summary figures of the open-loop traffic (``crates/incast-sim/src/stats/fct.rs``): NaN without ``[traffic]``.
_TRAFFIC_FIGURES = ("open_flows", "offered_load", "slowdown", "fct_ms_", "queries", "query_time")
_MAY_BE_UNDEFINED = frozenset(
    {
        "block_time_ms.p50",
        "block_time_ms.p99",
        "block_time_ms.max",
        "unluckiest_flow_timeouts_per_block",
        "unluckiest_flow_floss_per_block",
        "unluckiest_flow_lack_per_block",
        "timed_out_block_fraction",
        "rude_polite_s",
        *TIMEOUT_FRACTIONS,
    }
)


def point_key(scenario: Scenario) -> str:
    """Content hash of the resolved scenario (the engine's canonical form) and the engine build."""
    return hashlib.sha256(f"{scenario.hash} {engine_build()}".encode()).hexdigest()


def key_path() -> Path:
    """Where this user's cache key lives: ``$XDG_CONFIG_HOME/incast/cache-key`` or ``~/.config/incast/cache-key``."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "incast" / "cache-key"


def _load_key() -> bytes:
    """The cache key, created (32 random bytes, mode 0600) if there is none or it is not 32 bytes."""
    path = key_path()
    try:
        key = read_bytes(path, limit=KEY_BYTES)
        if len(key) == KEY_BYTES:
            return key
    except FileNotFoundError:
        pass
    except ScenarioError:
        pass  # not a regular file, or too long: replaced below
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, secrets.token_bytes(KEY_BYTES))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # atomic: of two sweeps starting at once, the first key wins
    except FileExistsError:
        if len(_peek(path)) != KEY_BYTES:  # the damaged key read above
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return read_bytes(path, limit=KEY_BYTES)


def _peek(path: Path) -> bytes:
    try:
        return read_bytes(path, limit=KEY_BYTES)
    except (OSError, ScenarioError):
        return b""


class PointCache:
    """The cache folder of one experiment. ``get`` returns a usable entry or None; ``put`` stores one.

    A file that cannot be read or written is skipped with a warning on
    standard error, leaving no temporary file behind.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        try:
            self._key: bytes | None = _load_key()
        except OSError as e:
            print(
                f"warning: {key_path()}: cannot create the cache key ({e.strerror or e}); "
                "every point is computed and none cached",
                file=sys.stderr,
            )
            self._key = None

    def get(self, point: Point) -> tuple[dict[str, float], float] | None:
        """The point's metrics and the seconds they took to compute (NaN if not recorded), if usable."""
        if self._key is None:
            return None
        key = point_key(point.scenario)
        path = self.directory / f"{key}.json"
        if not os.path.lexists(path):
            return None
        try:
            doc = read_json(path)
        except (OSError, ScenarioError) as e:
            _reject(path, f"unreadable ({_why(e, path)})")
            return None
        if isinstance(doc, dict) and "mac" not in doc:
            return None  # written by an older incast: recomputed without a warning
        why = self._invalid(doc, key, point.scenario)
        if why:
            _reject(path, why)
            return None
        return dict(doc["metrics"]), float(doc["compute_s"])

    def put(self, point: Point, metrics: Mapping[str, float], compute_s: float) -> None:
        """Store the point's metrics; a point whose metrics would be refused on reading is not stored."""
        if self._key is None:
            return
        key = point_key(point.scenario)
        path = self.directory / f"{key}.json"
        compute_s = round(compute_s, 6)
        if _implausible(metrics):
            return
        doc = {
            "key": key,
            "scenario_hash": point.scenario.hash,
            "engine": engine_build(),
            "scenario": point.scenario.to_dict(),
            "metrics": dict(metrics),
            "compute_s": compute_s,
            "mac": self._mac(key, point.scenario, metrics, compute_s),
        }
        tmp = self.directory / f".{key}.{os.getpid()}.tmp"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(doc, allow_nan=True), encoding="utf-8")
            tmp.replace(path)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            why = e.strerror or e
            print(f"warning: {path}: cannot cache this point ({why}); it will be recomputed", file=sys.stderr)

    def _mac(self, key: str, scenario: Scenario, metrics: Mapping[str, Any], compute_s: Any) -> str:
        assert self._key is not None
        body = {
            "key": key,
            "scenario_hash": scenario.hash,
            "engine": engine_build(),
            "metrics": dict(metrics),
            "compute_s": compute_s,
        }
        text = json.dumps(body, sort_keys=True, allow_nan=True)
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()

    def _invalid(self, doc: Any, key: str, scenario: Scenario) -> str | None:
        """Why a cache entry cannot be used for the point ``key``, or None if it can."""
        if not isinstance(doc, dict) or not isinstance(doc.get("metrics"), dict):
            return "not a cache entry"
        if doc.get("key") != key:
            return "computed for another point"
        mac = doc.get("mac")
        expected = self._mac(key, scenario, doc["metrics"], doc.get("compute_s"))
        if not isinstance(mac, str) or not hmac.compare_digest(mac, expected):
            return "MAC mismatch (edited, damaged, or written by another user or engine version)"
        if isinstance(doc.get("compute_s"), bool) or not isinstance(doc.get("compute_s"), (int, float)):
            return f"compute_s is {doc.get('compute_s')!r}, not a number"
        return _implausible(doc["metrics"])


def _implausible(metrics: Mapping[str, Any]) -> str | None:
    """Why a point's metrics cannot be right, or None."""
    for m in METRICS:
        v = metrics.get(m)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return f"metric {m} is {v!r}, not a number"
        if math.isnan(v) and m not in _MAY_BE_UNDEFINED and not m.startswith(_TRAFFIC_FIGURES):
            return f"metric {m} is NaN"
        if math.isinf(v) or v < 0:
            return f"metric {m} is {v!r}"
    best = metrics["best_goodput_mbps"]
    if metrics["goodput_mbps"] > best * 1.000001 or metrics["utilization"] > 1.000001:
        return f"goodput {metrics['goodput_mbps']} Mbps exceeds the best the link carries ({best} Mbps)"
    return None


def _why(e: Exception, path: Path) -> str:
    if isinstance(e, OSError):
        return str(e.strerror or e.__class__.__name__)
    return str(e).removeprefix(f"{path}: ")


def _reject(path: Path, why: str) -> None:
    print(f"warning: {path}: {why}; recomputing the point", file=sys.stderr)
