"""Presets: named bundles of settings that everything the user says overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import incast
from incast.cli import main
from incast.presets import PRESETS, preset_base, with_preset
from incast.scenario import Scenario


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_is_a_valid_scenario_that_runs(name: str) -> None:
    r = incast.run(preset=name, servers=4, blocks=2)
    assert r.blocks == 2
    for dotted, value in PRESETS[name].settings.items():
        table, key = dotted.split(".")
        assert preset_base(name)[table][key] == value


def test_explicit_fields_override_the_preset() -> None:
    r = incast.run(preset="dctcp", servers=4, blocks=2, switch={"ecn_threshold": "65pkt", "buffer": "256KiB"})
    assert (r.scenario.tcp.cc, r.scenario.switch.ecn_threshold) == ("dctcp", "65pkt")
    assert incast.run(preset="gip", servers=2, blocks=1, **{"tcp.gip": "123"}).scenario.tcp.gip == "123"


def test_cli_preset_under_file_options_and_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text('servers = 3\nblocks = 2\n[tcp]\ndelayed_ack = "1ms"\n')
    argv = ["run", str(scenario), "--preset", "fine-rto", "--rto-min", "1ms"]
    argv += ["--set", "tcp.rto_randomize=false", "--json"]
    assert main(argv) == 0
    tcp = json.loads(capsys.readouterr().out)["scenario"]["tcp"]
    got = (tcp["delayed_ack"], tcp["rto_min"], tcp["rto_randomize"], tcp["clock_granularity"])
    assert got == (0.001, 0.001, False, 0.0)


def test_unknown_preset_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--servers", "2", "--preset", "vegas"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: preset: unknown 'vegas'; one of linux, linux-2.6, ns2, ns3, fine-rto")
    assert err.count("\n") == 1
    with pytest.raises(incast.ScenarioError, match="preset: unknown"):
        incast.run(preset="vegas", servers=2)


def test_presets_verb_lists_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["presets", "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [p["name"] for p in listed] == list(PRESETS)
    assert all(p["settings"] and p["why"] for p in listed)


def test_the_dctcp_preset_scales_k_with_the_link_rate() -> None:
    """The DCTCP paper's K: 20 packets at 1 Gbps, 65 at 10 Gbps (its §4)."""
    at = {rate: with_preset("dctcp", {"servers": 4, "link": {"rate": rate}, "switch": {"buffer": "1MiB"}})
          for rate in ("1Gbps", "10Gbps")}  # fmt: skip
    assert Scenario.parse(at["1Gbps"]).switch.ecn_threshold == "20pkt"
    assert Scenario.parse(at["10Gbps"]).switch.ecn_threshold == "65pkt"
