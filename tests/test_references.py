"""Every reference (ns-2, ns-3, the testbed) through one interface, and ``incast validate --against ns3``."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import incast
from incast.cli import main
from incast.presets import with_preset
from incast.reference import ns3, ns3_options
from incast.reference import testbed as on_the_testbed
from incast.reference.base import Reference, Refused
from incast.reference.ns2 import Ns2
from incast.reference.ns3_options import Ns3, options

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "incast"
REFERENCES: list[Reference] = [Ns2(), Ns3(), on_the_testbed.Testbed()]


def on(reference: Reference, **fields: object) -> incast.Scenario:
    """A small scenario over the reference's own preset."""
    return incast.Scenario(**with_preset(reference.preset, {"servers": 4, "blocks": 3, **fields}))


@pytest.mark.parametrize("reference", REFERENCES, ids=lambda r: r.name)
def test_each_reference_refuses_a_second_client_in_one_line_naming_the_field(reference: Reference) -> None:
    s = on(reference, workload={"clients": 2})
    assert [r.setting for r in reference.refusals(s)][:1] == ["workload.clients"]
    with pytest.raises(Refused) as e:
        reference.check(s)
    message = str(e.value)
    assert message.startswith("workload.clients: ") and message.endswith(f" ({reference.title})")
    assert "\n" not in message


@pytest.mark.parametrize("reference", REFERENCES, ids=lambda r: r.name)
def test_each_reference_runs_its_own_preset_and_notes_what_it_runs_differently(reference: Reference) -> None:
    s = on(reference)
    assert reference.refusals(s) == []
    reference.check(s)
    notes = reference.notes(s)
    assert notes and all(isinstance(n, str) and n and "\n" not in n for n in notes)


def test_ns3_is_given_the_scenario_in_its_own_options_and_units() -> None:
    s = on(Ns3(), tcp={"rto_min": "1ms"}, link={"skew": "1ns"}, seed=7)
    args = ns3.parser().parse_args(options(s))
    assert (args.servers, args.blocks, args.seed, args.order) == (4, 3, 7, "shuffled")
    assert (args.sru, args.request, args.buffer, args.socket_buffer) == (262_144, 100, 32_768, 1_048_576)
    assert (args.link, args.rtt, args.skew, args.rto_min) == (10**9, 100e-6, 1e-9, 1e-3)
    assert (args.sack, args.recovery, args.timestamps, args.limited_transmit) == (True, "prr", False, True)
    assert (args.mss, args.init_cwnd, args.clock_granularity) == (1460, 10, 0.0)
    # ns-3's SegmentSize is payload: with timestamps the engine's 1460-byte MSS carries 1448.
    stamped = ns3.parser().parse_args(options(on(Ns3(), tcp={"timestamps": True, "recovery": "newreno"})))
    assert (stamped.mss, stamped.timestamps, stamped.sack) == (1448, True, False)
    # A packet-count port is that many of ns-3's full PPP frames (1460 + 40 + 2 bytes).
    assert ns3.parser().parse_args(options(on(Ns3(), switch={"buffer": "20pkt"}))).buffer == 20 * 1502


@pytest.mark.parametrize(
    ("fields", "setting"),
    [
        ({"tcp": {"cc": "cubic"}}, "tcp.cc"),
        ({"tcp": {"recovery": "reno"}}, "tcp.recovery"),
        ({"tcp": {"delayed_ack": "40ms"}}, "tcp.delayed_ack"),
        ({"tcp": {"dupack_threshold": 2}}, "tcp.dupack_threshold"),
        ({"workload": {"block": "1MiB"}}, "workload.block"),
        ({"workload": {"server_jitter": "10us"}}, "workload.server_jitter"),
        ({"link": {"skew": "1ps"}}, "link.skew"),
    ],
)
def test_what_the_ns3_harness_cannot_set_is_refused(fields: dict[str, object], setting: str) -> None:
    assert [r.setting for r in Ns3().refusals(on(Ns3(), **fields))] == [setting]


def test_ns3_notes_what_the_ns3_preset_would_match() -> None:
    def noted(s: incast.Scenario) -> list[str]:
        return [n.split(":")[0] for n in Ns3().notes(s)]

    preset = noted(on(Ns3()))
    assert preset == ["ns-3 has no Ethernet framing", "switch.buffer", "workload.order"]
    plain = noted(incast.Scenario(servers=4, blocks=3, tcp={"delayed_ack": "off"}))
    assert {"tcp.rto_backoff_reset", "tcp.ssthresh_rule", "link.arrival_order", "switch.admission"} <= set(plain)


def test_the_ns3_harness_parses_units_with_the_packages_parser_also_as_a_script() -> None:
    """Run by an interpreter without incast, ns3.py reads incast/units.py from beside its folder."""
    assert ns3.size("32KiB") == 32_768 and ns3.duration("0") == 0.0 and ns3.rate("1.1Gbps") == 1_100_000_000
    done = subprocess.run(
        [sys.executable, "-I", str(ns3_options.SCRIPT), "--servers", "1", "--blocks", "1", "--sru", "32"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "ns3.py: error: argument --sru: '32' needs a unit: use a whole number of bytes with one of "
        'B, KB, MB, GB, KiB, MiB, GiB (e.g. "32KiB")'
    )


SMALL_NS3 = ["validate", "--against", "ns3", "--servers", "2", "--blocks", "1", "--sru", "32KiB", "--json"]


def test_against_ns3_without_the_wheel_is_one_line_saying_what_to_install(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ns3_options, "wheel_missing", lambda: True)
    assert main(SMALL_NS3) == 2
    out, err = capsys.readouterr()
    assert out == ""
    install = "install it with pip install ns3==3.44.post0 (about 670 MiB)"
    assert err == f"error: ns-3: this Python has no ns3 wheel; {install}\n"


def test_against_ns3_runs_or_refuses_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(SMALL_NS3)
    out, err = capsys.readouterr()
    if ns3_options.wheel_missing():
        assert (code, out, err.count("\n")) == (2, "", 1) and err.startswith("error: ns-3: ")
        return
    assert code == 0, err
    d = json.loads(out)
    assert (d["against"], d["preset"], d["ns3"]["simulator"]) == ("ns3", "ns3", "ns-3 3.44")
    assert d["ns3"]["blocks"] == d["simulator"]["blocks"] == 1
    assert d["ns3"]["bytes_delivered"] == d["simulator"]["bytes_delivered"] == 2 * 32_768
    assert set(d["figures"]["fast_retransmits"]) == {"simulator", "ns3", "ratio"}
    assert err.startswith("note: ns3: ns-3 has no Ethernet framing")


# -- one refusal mechanism ------------------------------------------------------------------------------

REFUSALS = ("ScenarioError", "Refused")


def own_refusals(source: str) -> list[str]:
    """What a module refuses outside the shared check: a ScenarioError (or subclass) it defines or raises."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and any(ast.unparse(b).split(".")[-1] in REFUSALS for b in node.bases):
            found.append(f"class {node.name}")
        if isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if ast.unparse(raised).split(".")[-1] in REFUSALS:
                found.append(f"raise {ast.unparse(raised)} (line {node.lineno})")
    return found


def test_only_the_shared_module_turns_a_reference_rule_into_an_error() -> None:
    harnesses = [*(PACKAGE / "reference").glob("*.py"), *(PACKAGE / "testbed").glob("*.py")]
    shared = PACKAGE / "reference" / "base.py"
    assert shared in harnesses
    found = {p.name: own_refusals(p.read_text(encoding="utf-8")) for p in harnesses if p != shared}
    assert {name: f for name, f in found.items() if f} == {}
    assert [f.split(" (")[0] for f in own_refusals(shared.read_text(encoding="utf-8"))] == [
        "class Refused",
        "raise Refused",
    ]


def test_the_refusal_finder_finds_a_refusal_of_its_own() -> None:
    source = "class Nope(ScenarioError): ...\ndef f():\n    raise errors.ScenarioError('x: y')\n"
    assert own_refusals(source) == ["class Nope", "raise errors.ScenarioError (line 3)"]
