"""The wide-area delay model: the ``[wan]`` table, ``--wan`` flags, ``wan`` on topology-file links."""

from __future__ import annotations

import json

import pytest

import incast
from incast import Scenario
from incast.cli import main
from incast.errors import ScenarioError

#: One bulk transfer into the client across a 20 ms wide-area hop with spikes.
BULK = {
    "servers": 1,
    "duration": "10s",
    "workload": {"sru": "1GiB"},
    "tcp": {"rto_min": "200us", "delayed_ack": "off", "spurious_rto": "frto"},
    "wan": {"delay": "20ms", "spike_interval": "2s", "spike_height": "50ms", "spike_duration": "100ms"},
}


@pytest.mark.parametrize(
    ("wan", "message"),
    [
        ({"delay": "soon"}, r'^wan\.delay: must be "off" or a duration; '),
        ({"delay": "20ms", "jitter": "-1ms"}, r"^wan\.jitter: "),
        ({"delay": "20ms", "jitter_dist": "normal"}, r'^wan\.jitter_dist: must be "exponential" or "uniform"'),
        ({"jitter": "1ms"}, r"^wan\.jitter: needs the wide-area model on \(set wan\.delay\)$"),
        ({"spike_interval": "1s"}, r"^wan\.spike_interval: needs the wide-area model on"),
        ({"delay": "20ms", "spike_interval": "0"}, r'^wan\.spike_interval: must be "off" or a positive duration'),
        ({"delay": "20ms", "spike_interval": "1s"}, r"^wan\.spike_height: must be positive when wan\.spike_interval"),
        (
            {"delay": "20ms", "spike_interval": "1s", "spike_height": "9ms"},
            r"^wan\.spike_duration: must be positive when wan\.spike_interval",
        ),
        ({"delay": "20ms", "shift_interval": "1s"}, r"^wan\.shift: must be positive when wan\.shift_interval is set$"),
        ({"delay": "20ms", "shift": "30ms"}, r"^wan\.shift: must not exceed wan\.delay \(20ms\)"),
        ({"delay": "20ms", "spikes": "often"}, r"^wan\.spikes: unknown setting; \[wan\] has delay, jitter, "),
    ],
)
def test_bad_wan_fields_are_rejected_naming_the_field(wan: dict[str, str], message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        Scenario.parse({"servers": 1, "wan": wan})


def test_the_wan_model_and_pause_do_not_mix() -> None:
    with pytest.raises(ScenarioError, match=r"^wan\.delay: the wide-area model together with PAUSE or PFC"):
        Scenario.parse({"servers": 1, "wan": {"delay": "1ms"}, "switch": {"pause": True}})


def test_a_wan_hop_adds_its_delay_to_every_block() -> None:
    local = {"servers": 1, "blocks": 4, "workload": {"sru": "1000B", "server_jitter": 0}}
    near = incast.run(local)
    far = incast.run({**local, "wan": {"delay": "15ms"}})
    extra = far.blocks_table["time_ms"] - near.blocks_table["time_ms"]
    assert extra.round(9).tolist() == [30.0] * 4
    assert "WAN 15ms" in far.scenario.describe()


def test_delay_spikes_make_spurious_timeouts_that_frto_undoes() -> None:
    fine = incast.run(BULK)
    coarse = incast.run(Scenario.parse(BULK, {"tcp.rto_min": "200ms"}))
    assert fine.drops == 0
    assert fine.timeouts > 0 and fine.spurious_timeouts == fine.timeouts
    assert fine.timeouts_table["spurious"].all()
    assert coarse.timeouts == 0


def test_wan_flags_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "--servers", "1", "--sru", "1GiB", "--duration", "3s", "--rto-min", "200us"]
    args += ["--delayed-ack", "off", "--spurious-rto", "eifel", "--set", "tcp.timestamps=true"]
    args += ["--wan", "20ms", "--wan-jitter", "1ms", "--wan-spikes", "1s,50ms,100ms", "--json"]
    assert main(args) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["scenario"]["wan"]["delay"] == 0.02
    assert d["scenario"]["wan"]["jitter"] == 0.001
    assert (d["scenario"]["wan"]["spike_interval"], d["scenario"]["wan"]["spike_duration"]) == (1.0, 0.1)
    assert d["spurious_timeouts"] > 0
    assert main(["run", "--servers", "1", "--wan", "20ms", "--wan-spikes", "1s,50ms"]) == 2
    assert capsys.readouterr().err.startswith("error: wan.spike_interval: --wan-spikes takes GAP,HEIGHT,DURATION")
    assert main(["run", "--servers", "1", "--wan-jitter", "1ms"]) == 2
    assert capsys.readouterr().err == "error: wan.jitter: needs the wide-area model on (set wan.delay)\n"


def test_a_topology_file_puts_the_wan_model_on_the_links_it_names() -> None:
    def graph(server_link: dict[str, object]) -> dict[str, object]:
        return {
            "kind": "graph",
            "nodes": [
                {"name": "c", "kind": "client"},
                {"name": "s", "kind": "server"},
                {"name": "sw", "kind": "switch"},
            ],
            "links": [{"a": "c", "b": "sw", "wan": False}, {"a": "s", "b": "sw", **server_link}],
        }

    base = {"servers": 1, "blocks": 2, "workload": {"sru": "1000B", "server_jitter": 0}}
    near = incast.run({**base, "topology": graph({})})
    far = incast.run({**base, "topology": graph({"wan": True}), "wan": {"delay": "5ms"}})
    assert (far.blocks_table["time_ms"] - near.blocks_table["time_ms"]).round(9).tolist() == [10.0, 10.0]
    on = {**base, "topology": graph({"wan": True}), "wan": {"delay": "5ms"}}
    assert Scenario.parse(on).topology.links[1]["wan"] is True
    with pytest.raises(ScenarioError, match=r"sets wan but the model is off \(set wan\.delay\)"):
        Scenario.parse({**base, "topology": graph({"wan": True})})
