"""Write the identity corpus: the scenarios whose full results `cargo test -p incast-sim --test identity` pins.

Run from the repository root: ``python tests/make_identity_corpus.py``. It takes every packaged
experiment's quick points (the first and last point of each case, seed 1), every preset on a 16-server
FAST08 read, and a few scenarios that turn on the traces and the packet capture, shortens each to a
few blocks or a short duration so the corpus runs in a debug build, and writes each as the settings
that differ from the defaults (human units, the engine's canonical form) to
``crates/incast-sim/tests/identity/NAME.json``. The digests are recorded by the Rust test itself
(``INCAST_RECORD=1 cargo test -p incast-sim --test identity``), never here.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from incast import experiment
from incast.presets import PRESETS, with_preset
from incast.scenario import Scenario

OUT = Path(__file__).resolve().parents[1] / "crates" / "incast-sim" / "tests" / "identity"

#: At most this many blocks and this much simulated time a scenario.
MAX_BLOCKS = 4
MAX_DURATION_S = 0.25


#: A ring of two switches, the trunk slower than the host links (as tests/test_topology.py's).
_RING = {
    "kind": "graph",
    "routing": "static",
    "nodes": [
        {"name": "c", "kind": "client"},
        *({"name": f"s{i}", "kind": "server"} for i in range(4)),
        {"name": "x", "kind": "switch"},
        {"name": "y", "kind": "switch"},
    ],
    "links": [
        {"a": "c", "b": "x"},
        {"a": "x", "b": "y", "rate": "500Mbps", "delay": "5us"},
        *({"a": f"s{i}", "b": "y"} for i in range(4)),
    ],
    "routes": [
        {"at": "x", "to": "c", "via": "c"},
        {"at": "y", "to": "c", "via": "x"},
        *({"at": "x", "to": f"s{i}", "via": "y"} for i in range(4)),
        *({"at": "y", "to": f"s{i}", "via": f"s{i}"} for i in range(4)),
    ],
}

#: Settings no experiment or preset turns on, each with what it needs beside it.
FEATURES: dict[str, dict[str, Any]] = {
    "seed-7": {"seed": 7},
    "link-loss": {"link": {"loss": 0.002}},
    "host-jitter": {"link": {"host_jitter": "20us", "propagation": "10us"}},
    "tree-skew": {
        "link": {"skew": "3us"},
        "topology": {"kind": "tree", "edge_switches": 4, "trunk_rate": "2Gbps", "trunk_delay": "2us"},
    },
    "graph-static": {"servers": 4, "topology": _RING},
    "rude-policing": {"tcp": {"rude_allowed": True, "rude": True}, "switch": {"rude_policy": "drop"}},
    "pfc": {
        "switch": {"buffer": "64KiB", "pfc": True, "pfc_priorities": [3], "pause_xoff": "24KiB", "pause_xon": "8KiB"},
        "workload": {"priority": 3},
        "background": {"tcp_flows": 1, "priority": 0, "udp_priority": 1},
    },
    "pause-quanta": {"switch": {"pause": True, "pause_quanta": 100}},
    "rcv-window-linux": {"tcp": {"rcv_window": "linux", "rcv_buf_max": "1MiB"}},
    "timestamps-eifel": {"tcp": {"timestamps": True, "timestamp_tick": "100us", "spurious_rto": "eifel"}},
    "gip-copies": {"tcp": {"gip": "333", "gip_copies": 2, "gip_head_cwnd": 3}},
    # GIP's unit heads after ns-2's idle timer expired between blocks (gip-fig15's ns-2 setting).
    "gip-ns2-idle": {"servers": 32, "tcp": {"gip": "333", "idle_restart": "ns2", "rto_min": "5ms"}},
    "delayed-ack-linux": {
        "tcp": {
            "delayed_ack": "linux",
            "delayed_ack_quickack_segments": 4,
            "delayed_ack_ato_min": "10ms",
            "delayed_ack_ato_max": "100ms",
        }
    },
    "delayed-ack-adaptive": {
        "tcp": {
            "delayed_ack": "adaptive",
            "delayed_ack_adaptive_gain_shift": 2,
            "delayed_ack_adaptive_multiplier": 3,
            "delayed_ack_adaptive_min": "100us",
            "delayed_ack_adaptive_max": "20ms",
        }
    },
    "cubic-constants": {
        "tcp": {"cc": "cubic", "cubic_beta": 0.8, "cubic_c": 0.5, "cubic_fast_convergence": False}
    },
    "dctcp-constants": {
        "tcp": {"cc": "dctcp", "dctcp_alpha_init": 0.5, "dctcp_g_shift": 2},
        "switch": {"ecn_threshold": "20pkt"},
    },
    "ictcp-constants": {
        "tcp": {
            "ictcp": True,
            "ictcp_alpha": 0.5,
            "ictcp_beta": 0.2,
            "ictcp_gamma1": 0.2,
            "ictcp_gamma2": 0.4,
            "ictcp_min_wnd": 3,
            "ictcp_init_wnd": 4,
        }
    },
    "workload-request-order": {"workload": {"request": "100B", "order": "fixed", "stagger": "5us"}},
    "clients-disjoint": {"servers": 4, "workload": {"clients": 3, "server_sets": "disjoint"}},
    "clients-shared": {"servers": 4, "workload": {"clients": 2}},
    "wan-uniform": {"wan": {"delay": "1ms", "jitter": "200us", "jitter_dist": "uniform"}},
    "no-timeout-rows": {"stats": {"timeouts": False}},
    "bbr": {"tcp": {"cc": "bbr"}},
    # The benchmark's BBR incast (bench/speed.py), run to its tenth block however long that takes.
    "bbr-benchmark": {
        "servers": 64,
        "blocks": 10,
        "duration": "300s",
        "tcp": {"cc": "bbr", "rto_min": "200us", "delayed_ack": "off"},
    },
    "bbr-trace": {"servers": 4, "tcp": {"cc": "bbr"}, "trace": {"bbr": True}},
    "bbr-link-loss": {"tcp": {"cc": "bbr"}, "link": {"loss": 0.01}},
}


def _diff(full: dict[str, Any], default: dict[str, Any]) -> dict[str, Any]:
    """The settings of ``full`` (canonical form) that differ from ``default``."""
    out: dict[str, Any] = {}
    for key, value in full.items():
        if isinstance(value, dict) and isinstance(default.get(key), dict):
            sub = _diff(value, default[key])
            if sub:
                out[key] = sub
        elif default.get(key) != value:
            out[key] = value
    return out


def _slug(text: str) -> str:
    """``text`` in lower-case letters, digits and single hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _shorten(scenario: Scenario) -> Scenario:
    """Cap the run at MAX_BLOCKS blocks (when it has reads) and MAX_DURATION_S of simulated time."""
    blocks = scenario.get("blocks")
    duration = scenario.get("duration")
    caps: dict[str, Any] = {"duration": f"{MAX_DURATION_S if duration is None else min(duration, MAX_DURATION_S)}s"}
    if scenario.get("workload.kind") != "none":
        caps["blocks"] = MAX_BLOCKS if blocks is None else min(blocks, MAX_BLOCKS)
    return scenario.with_overrides(caps)


def corpus() -> dict[str, Scenario]:
    """Every scenario of the corpus, by file name."""
    out: dict[str, Scenario] = {}
    for path in experiment.packaged():
        exp = experiment.load(path)
        by_case: dict[str, list[experiment.Point]] = {}
        for point in exp.points(quick=True):
            if point.seed == 1:
                by_case.setdefault(str(point.coords.get("case", "")), []).append(point)
        for case, points in by_case.items():
            for end, point in (("first", points[0]), ("last", points[-1])):
                name = "-".join(_slug(p) for p in (exp.name, case, end) if p)
                out[name] = _shorten(point.scenario)
    base = {"servers": 16, "blocks": MAX_BLOCKS, "duration": f"{MAX_DURATION_S}s"}
    for preset in PRESETS:
        out[f"preset-{preset}"] = Scenario.parse(with_preset(preset, base))
    traced = {**base, "trace": {"goodput_bin": "1ms", "queue": True, "flows": True, "block_cwnd": True}}
    out["trace-series"] = Scenario.parse(traced)
    out["trace-pcap"] = Scenario.parse({**base, "servers": 4, "trace": {"pcap": True}})
    for name, settings in FEATURES.items():
        out[f"feature-{name}"] = Scenario.parse({**base, **settings})
    out["trace-pcap-linux"] = Scenario.parse(with_preset("linux", {**base, "servers": 4, "trace": {"pcap": True}}))
    return out


def main() -> int:
    default = json.loads(Scenario(servers=1).to_json())
    scenarios = corpus()
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    for name, scenario in sorted(scenarios.items()):
        settings = {"servers": scenario.servers, **_diff(json.loads(scenario.to_json()), default)}
        (OUT / f"{name}.json").write_text(json.dumps(settings, indent=1, sort_keys=True) + "\n")
    print(f"{len(scenarios)} scenarios in {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
