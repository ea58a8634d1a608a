"""A dispute is a reference run: [[claim.reference]] checked, run, recorded and read back.

The last test re-runs the cheapest recorded ns-2 reference points of the packaged
experiments and asks for the record's numbers exactly, and for every claim they
dispute to stay disputed.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import tomli_w

from incast import disputes
from incast.cli import main
from incast.experiment import METRICS, ExperimentError, load, packaged
from incast.reference import ns2, ns2_build
from incast.scenario import Scenario
from incast.verdicts import ReferenceTable, evaluate

NS2 = pytest.mark.skipif(shutil.which("ns") is None, reason="needs ns-2.35 (apt-get install ns2)")


def tiny(**claim: Any) -> dict[str, Any]:
    """A two-server-count experiment whose one claim (4 servers keep half of one's goodput) carries ``claim``."""
    return {
        "meta": {"name": "fast08-fig98", "paper": "FAST08", "section": "4", "figure": "Figure 98", "title": "t"},
        "preset": "ns2",
        "base": {"blocks": 2, "workload": {"sru": "32KiB"}, "tcp": {"delayed_ack": "off"}},
        "sweep": {"servers": [1, 4, 8]},
        "run": {"seeds": 1, "metrics": ["goodput_mbps"]},
        "claim": [
            {
                "text": "4 and 8 servers keep half of one server's goodput",
                "metric": "goodput_mbps",
                "where": {"servers": [4, 8]},
                "op": ">",
                "than": {"where": {"servers": 1}, "scale": 0.5},
                **claim,
            }
        ],
    }


def table(goodput: dict[int, float]) -> pd.DataFrame:
    """A summary table over servers with these goodput means."""
    means: dict[str, object] = {f"{m}_mean": math.nan for m in METRICS}
    return pd.DataFrame({"servers": list(goodput), **means, "goodput_mbps_mean": list(goodput.values())})


REFERENCE = {"reference": [{"harness": "ns2", "set": {"blocks": 20}, "sweep": {"servers": [1, 4]}}]}
OURS_FAIL = table({1: 900.0, 4: 100.0, 8: 90.0})


def verdict_with(reference: pd.DataFrame | None, why: str = "not run") -> Any:
    (v,) = evaluate(load(tiny(**REFERENCE)), OURS_FAIL, {(0, 0): ReferenceTable("ns2", "ns-2.35", reference, why)})
    return v


def test_a_claim_that_fails_where_the_reference_fails_it_too_is_disputed_with_the_references_numbers() -> None:
    v = verdict_with(table({1: 880.0, 4: 130.0}))
    assert v.verdict == "disputed"
    assert v.reason == (
        "2 of 2 points miss; furthest: servers 8: goodput_mbps 90, needs > 450; "
        "ns-2.35 (blocks 20, seed 1) fails it too: servers 4: 130 > 440 ✗"
    )
    assert [r.verdict for r in v.references] == ["fails"]


def test_a_claim_the_reference_bears_out_stays_ours_to_fix() -> None:
    v = verdict_with(table({1: 880.0, 4: 700.0}))
    assert v.verdict == "fails"
    assert "ns-2.35 (blocks 20, seed 1) bears it out: servers 4: 700 > 440 ✓" in v.reason


def test_a_claim_whose_reference_has_no_record_fails_and_names_the_command() -> None:
    v = verdict_with(None, "3 of its 3 points ran other settings, or none, in the record of 2026-01-01T00:00:00Z")
    assert v.verdict == "fails"
    assert v.reason.endswith(
        "ns-2.35 (blocks 20, seed 1) has no result here (3 of its 3 points ran other settings, or none, "
        "in the record of 2026-01-01T00:00:00Z): incast reproduce fast08-fig98 --against ns2"
    )


def test_a_claim_that_holds_holds_whatever_its_reference_gave() -> None:
    (v,) = evaluate(
        load(tiny(**REFERENCE)),
        table({1: 900.0, 4: 800.0, 8: 700.0}),
        {(0, 0): ReferenceTable("ns2", "ns-2.35", table({1: 880.0, 4: 130.0}))},
    )
    assert (v.verdict, v.references) == ("holds", ())


def test_a_claim_no_reference_can_bear_on_fails_with_its_one_line_reason() -> None:
    why = "the paper ran it in a kernel of its own, which the testbed's is not"
    (v,) = evaluate(load(tiny(no_reference=why)), OURS_FAIL)
    assert v.verdict == "fails"
    assert v.reason == f"2 of 2 points miss; furthest: servers 8: goodput_mbps 90, needs > 450; no reference run: {why}"
    (held,) = evaluate(load(tiny(no_reference=why)), table({1: 900.0, 4: 800.0, 8: 700.0}))
    assert (held.verdict, held.reason) == ("holds", "")


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        ({**REFERENCE, "no_reference": "none here"}, "claim[0]: a claim with a reference run takes no no_reference"),
        ({"no_reference": "two\nlines"}, "claim[0]: no_reference is one line"),
        ({"no_reference": ""}, "claim[0].no_reference"),
    ],
)
def test_a_claim_says_why_it_has_no_reference_only_without_one_and_in_one_line(
    claim: dict[str, Any], message: str
) -> None:
    with pytest.raises(ExperimentError, match=re.escape(message)):
        load(tiny(**claim))


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ({"harness": "ns4"}, "claim[0].reference[0].harness: must be 'ns2', 'ns3' or 'testbed'"),
        ({"harness": "ns2", "sweep": {"blocks": [2]}}, "claim[0].reference[0].sweep.blocks: not an axis (servers)"),
        ({"harness": "ns2", "sweep": {"servers": [3]}}, "claim[0].reference[0].sweep.servers[0]: 3 is not a value"),
        ({"harness": "ns2", "set": {"tcp.mss": "big"}}, "claim[0].reference[0].set.tcp.mss"),
        ({"harness": "ns2", "seeds": 0}, "claim[0].reference[0].seeds: input should be greater than or equal to 1"),
        (
            {"harness": "ns2", "flows": "engine"},
            'claim[0].reference[0].flows: "engine" only with harness "ns3" (its open-loop traffic), not \'ns2\'',
        ),
        ({"harness": "ns3", "flows": "mine"}, "claim[0].reference[0].flows: must be 'own' or 'engine'"),
        (
            {"harness": "ns2", "sweep": {"servers": [4, 8]}},
            "claim[0].reference[0].sweep.servers: the claim compares servers 4 with a point the grid leaves out",
        ),
        (
            {"harness": "ns2", "sweep": {"servers": [1]}},
            "claim[0].reference[0].sweep.servers: the grid must hold at least one point the claim reads",
        ),
    ],
)
def test_a_bad_reference_is_one_line_naming_its_field(reference: dict[str, Any], message: str) -> None:
    with pytest.raises(ExperimentError) as e:
        load(tiny(reference=[reference]))
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_a_claim_on_any_point_needs_every_point_in_the_reference_grid() -> None:
    reference = [{"harness": "ns2", "sweep": {"servers": [1, 4]}}]
    with pytest.raises(ExperimentError, match=r"must hold every point the claim reads; it leaves out servers = 8"):
        load(tiny(quantifier="any", reference=reference))


def test_a_written_dispute_is_refused_as_an_unknown_field() -> None:
    with pytest.raises(ExperimentError, match=r"claim\[0\]\.disputed: unknown field"):
        load(tiny(disputed="ns-2.35 gives 45 Mbps"))


def test_the_reference_runs_the_experiments_own_scenario_on_its_grid_with_its_settings_and_seeds() -> None:
    experiment = load(
        tiny(reference=[{"harness": "ns2", "set": {"blocks": 5}, "sweep": {"servers": [1, 4]}, "seeds": 2}])
    )
    points = experiment.reference_points(experiment.spec.claim[0].reference[0])
    assert [(p.coords["servers"], p.seed, p.scenario.blocks) for p in points] == [
        (1, 1, 5),
        (1, 2, 5),
        (4, 1, 5),
        (4, 2, 5),
    ]
    ours = {p.coords["servers"]: p.scenario for p in experiment.points() if p.coords["servers"] in (1, 4)}
    assert points[2].scenario == ours[4].with_overrides({"blocks": 5})


def test_ns2_metrics_arrive_under_the_engines_names() -> None:
    flat = disputes.flatten(
        {
            "goodput_mbps": 1.0,
            "block_time_ms": {"p50": 2.0},
            "timeout_classes": {"full_window_loss": 3, "lost_retransmit_dart_ge_thresh": 4},
            "unluckiest_flow_timeouts_per_block": 0.5,
            "timeouts": 6,
            "notes": ["a note"],
        }
    )
    assert flat == {
        "goodput_mbps": 1.0,
        "block_time_ms.p50": 2.0,
        "timeout_classes.full_window_loss": 3.0,
        "lost_retransmit_dart_ge_thresh": 4.0,
        "unluckiest_flow_timeouts_per_block": 0.5,
        "timeouts": 6.0,
    }


@pytest.mark.parametrize(("status", "error"), [("complete", None), ("failed", "a block took longer than 60s")])
def test_a_testbed_run_counts_when_it_completed_and_is_one_error_line_when_not(
    status: str, error: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Bed:
        def run(self, scenario: Any) -> dict[str, Any]:
            return {"status": status, "error": error, "goodput_mbps": 1.5}

    monkeypatch.setattr(disputes, "harness", lambda name, traced, flows: Bed())
    monkeypatch.setattr("incast.reference.compare.prepared", lambda reference, s: (s, []))
    point = {"servers": 1, "blocks": 1}
    if status == "complete":
        assert disputes.measure("testbed", point, False)[0] == {"goodput_mbps": 1.5}
    else:
        with pytest.raises(disputes.DisputeError, match=f"^testbed: {error}$"):
            disputes.measure("testbed", point, False)


@NS2
def test_reproduce_against_ns2_records_the_run_and_disputes_from_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A claim ns-2 fails as well (8 servers on a 4-packet port do not keep half of one server's goodput)
    is disputed from the run ``--against ns2`` recorded; a changed setting makes the record stale."""
    doc = tiny(reference=[{"harness": "ns2", "sweep": {"servers": [1, 8]}}])
    doc["base"]["switch"] = {"buffer": "4pkt"}
    doc["claim"][0]["where"] = {"servers": 8}
    doc["plot"] = [{"x": "servers", "y": "goodput_mbps"}]
    path = tmp_path / "study.toml"
    path.write_text(tomli_w.dumps(doc))
    out = str(tmp_path / "results")
    assert main(["reproduce", str(path), "--out", out, "--json"]) == 0
    (before,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert before["claims"][0]["verdict"] == "fails"
    assert "has no result here (not run)" in before["claims"][0]["reason"]
    assert main(["reproduce", str(path), "--out", out, "--json", "--against", "ns2"]) == 0
    (after,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    record = json.loads((tmp_path / "references" / "fast08-fig98.json").read_text())
    points = record["harnesses"]["ns2"]["points"].values()
    assert sorted(p["coords"]["servers"] for p in points) == [1, 8]
    assert after["claims"][0]["verdict"] == "disputed", after["claims"][0]["reason"]
    assert after["claims"][0]["references"][0]["verdict"] == "fails"
    assert (tmp_path / "results" / "fast08-fig98" / "figure-ns2.svg").is_file()
    doc["base"]["switch"] = {"buffer": "8pkt"}
    path.write_text(tomli_w.dumps(doc))
    (stale,) = disputes.tables(load(path)).values()
    assert stale.summary is None
    assert stale.missing.startswith("2 of its 2 points ran other settings")


def test_reproduce_against_a_harness_the_experiment_has_no_reference_on_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["reproduce", "fast08-fig14", "--against", "ns2"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: NAME: fast08-fig14 has no claim with an ns2 reference run ([[claim.reference]])"
    )


#: The ns-2 points the CI re-runs: the cheapest recorded, up to this many seconds of recorded run time.
CI_BUDGET_S = 60.0


def _recorded_ns2() -> list[tuple[str, str, dict[str, Any]]]:
    """Every recorded ns-2 point of the packaged experiments: (experiment, fingerprint, entry)."""
    out = []
    for path in packaged():
        experiment = load(path)
        part = disputes.read_record(experiment)["harnesses"].get("ns2")
        for fingerprint, entry in (part or {}).get("points", {}).items():
            out.append((experiment.name, fingerprint, entry))
    return out


def _point(name: str, fingerprint: str) -> Any:
    """The point of experiment ``name`` whose ns-2 run has ``fingerprint``."""
    experiment = load(name)
    return next(
        p
        for c in experiment.spec.claim
        for r in c.reference
        if r.harness == "ns2"
        for p in experiment.reference_points(r)
        if disputes.harness("ns2").fingerprint(p.scenario) == fingerprint
    )


@NS2
def test_the_cheap_recorded_ns2_reference_points_run_again_to_the_recorded_numbers() -> None:
    """ns-2 is deterministic: a recorded point run again gives its numbers exactly, so a change of the
    harness's output (its counting, its parser) cannot leave a record stale unseen. A point the patched
    ns-2 runs (the randomized timeout, a capped back-off) joins only where that ns-2 is built already
    (ns2_build; CI does not build it)."""
    chosen, spent = [], 0.0
    for name, fingerprint, entry in sorted(_recorded_ns2(), key=lambda r: r[2]["wall_s"]):
        point = _point(name, fingerprint)
        if ns2.patched(point.scenario) and ns2_build.built() is None:
            continue
        if spent + entry["wall_s"] > CI_BUDGET_S:
            break
        chosen.append((name, point, entry))
        spent += entry["wall_s"]
    assert chosen, "no ns-2 reference is recorded"
    for name, point, entry in chosen:
        traced = any(m in entry["metrics"] for m in ("timeout_classes.other", "unluckiest_flow_timeouts_per_block"))
        metrics, _, _ = disputes.measure("ns2", point.scenario.to_dict(), traced)
        assert metrics == pytest.approx(entry["metrics"], nan_ok=True), (name, point.coords, point.seed)


def test_every_recorded_reference_still_runs_what_its_experiment_asks() -> None:
    """A record made for other settings (an experiment, a default or the harness changed since) would leave
    its claims fails in silence: every reference with a recorded harness has all its points recorded."""
    for path in packaged():
        experiment = load(path)
        recorded = disputes.read_record(experiment)["harnesses"]
        for (i, j), t in disputes.tables(experiment).items():
            if t.harness in recorded:
                assert t.summary is not None, (experiment.name, i, j, t.missing)


def test_a_testbed_point_is_keyed_by_what_the_testbed_sets_up() -> None:
    """A setting only the simulator reads leaves a recorded testbed run valid; one the testbed applies, or
    another run of the point (its seed), does not."""
    testbed = disputes.harness("testbed")
    key = testbed.fingerprint(Scenario.parse({"servers": 4}, {}))
    assert testbed.fingerprint(Scenario.parse({"servers": 4}, {"tcp.dupack_idle": True})) == key
    assert testbed.fingerprint(Scenario.parse({"servers": 4}, {"switch.buffer": "64KiB"})) != key
    assert testbed.fingerprint(Scenario.parse({"servers": 4, "seed": 2}, {})) != key
