"""Traffic classes (802.1p priorities) and per-priority flow control (802.1Qbb PFC)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

import incast
from incast import Scenario
from incast.cli import main
from incast.errors import ScenarioError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: FAST08 §6's head-of-line scene: the reads in priority 3 and a bulk flow in
#: priority 0 share a 10 Gbps trunk into the core, where each has its own port.
HOL: dict[str, Any] = {
    "servers": 16,
    "duration": "100ms",
    "link": {"rtt": "20us"},
    "topology": {"kind": "tree", "trunk_rate": "10Gbps"},
    "switch": {"buffer": "64KiB", "pfc": True, "pfc_priorities": [3]},
    "workload": {"priority": 3},
    "background": {"tcp_flows": 1, "priority": 0},
}


def test_pfc_reaches_the_engine_and_round_trips() -> None:
    s = Scenario.parse(HOL)
    sw = json.loads(s.to_json())["switch"]
    thresholds = (sw["pause"], sw["pause_xoff"], sw["pause_xon"])
    assert thresholds == (False, "16KiB", "8KiB"), "PFC runs on the PAUSE thresholds"
    assert (sw["pfc"], sw["pfc_priorities"]) == (True, [3])
    assert s.workload.priority == 3
    assert Scenario.parse(tomllib.loads(s.to_toml())) == s
    assert Scenario.parse({**HOL, "switch": {**HOL["switch"], "pfc_priorities": "3,4"}}).switch.pfc_priorities == [3, 4]
    assert Scenario.parse({**HOL, "switch": {**HOL["switch"], "pfc_priorities": "all"}}).switch.pfc_priorities == "all"


def test_pfc_pauses_only_the_reads_priority_on_the_trunk() -> None:
    r = incast.run(Scenario.parse(HOL))
    trunk = r.ports[(r.ports["node"] == "edge0") & (r.ports["peer"] == "core")].iloc[0]
    assert trunk["paused_p3_us"] > 0
    assert all(trunk[f"paused_p{p}_us"] == 0 for p in range(8) if p != 3)
    assert r.background_goodput_mbps > 900, "the victim keeps its port"
    assert r.packets_sent == r.packets_delivered + r.drops + r.packets_in_flight


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"workload": {"priority": 8}}, "workload.priority: must be a whole number between 0 and 7, got 8"),
        ({"background": {"tcp_flows": 1, "udp_priority": -1}}, "background.udp_priority: must be a whole number"),
        ({"switch": {"pfc": True, "pfc_priorities": [9]}}, 'switch.pfc_priorities: must be "all" or a list of 802.1p'),
        ({"switch": {"pfc": True, "pfc_priorities": []}}, "switch.pfc_priorities: .* name at least one"),
        ({"switch": {"pfc": True, "pause": True}}, "switch.pfc: replaces 802.3x PAUSE"),
        ({"workload": {"priority": 0}}, "switch.pfc: needs traffic in more than one priority"),
        ({"switch": {"pfc": True, "buffer_model": "qos:4"}}, "switch.pause_xoff: must be below a 1/4 partition"),
        ({"switch": {"pfc": False, "buffer_model": "shared:1"}}, "switch.buffer_model: shared memory together with"),
    ],
)
def test_bad_classes_are_rejected_naming_the_field(change: dict[str, Any], message: str) -> None:
    data = {**HOL, **{k: {**HOL[k], **v} for k, v in change.items()}}
    with pytest.raises(ScenarioError, match=f"^{message}"):
        Scenario.parse(data)


def test_engine_rejects_lossy_links_with_classes() -> None:
    with pytest.raises(ScenarioError, match="^link.loss: random loss together with traffic classes"):
        Scenario.parse({**HOL, "link": {"rtt": "20us", "loss": 0.001}, "switch": {"buffer": "64KiB"}})


def test_cli_pfc_flag(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "--servers", "4", "--duration", "20ms", "--topology", "tree:1", "--pfc", "--background", "tcp:1"]
    assert main([*args, "--set", "workload.priority=3", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["scenario"]["switch"]["pfc"] is True and d["scenario"]["workload"]["priority"] == 3
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "switch.pfc: needs traffic in more than one priority" in err and "Traceback" not in err
