"""Experiment files: every packaged one is valid, a bad field is named, claims are checked as rules."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from incast.cli import main
from incast.experiment import METRICS, Claim, ExperimentError, load, packaged
from incast.verdicts import count_verdicts, evaluate

PACKAGED = packaged()


def tiny(**changes: Any) -> dict[str, Any]:
    """A small valid experiment in the TOML shape, with top-level tables replaced by ``changes``."""
    doc: dict[str, Any] = {
        "meta": {"name": "fast08-fig99", "paper": "FAST08", "section": "4", "figure": "Figure 99", "title": "t"},
        "base": {"blocks": 2, "workload": {"sru": "32KiB"}},
        "sweep": {"servers": [1, 4], "tcp.rto_min": ["200ms", "1ms"]},
        "run": {"seeds": 2, "metrics": ["goodput_mbps"]},
        "claim": [
            {
                "text": "4 servers with 1 ms beat 200 ms",
                "metric": "goodput_mbps",
                "where": {"servers": 4, "tcp.rto_min": "1ms"},
                "op": ">",
                "than": {"where": {"tcp.rto_min": "200ms"}},
            }
        ],
    }
    doc.update(changes)
    return doc


# -- the packaged experiments -------------------------------------------------------


def test_there_are_packaged_experiments_for_the_three_papers_with_simulations() -> None:
    papers = {load(p).spec.meta.paper for p in PACKAGED}
    assert {"FAST08", "CMU09", "GIP", "RUDE"} <= papers
    assert {"fast08-fig06", "fast08-table3", "cmu09-fig13", "gip-fig15", "rude-fig06"} <= {p.stem for p in PACKAGED}


@pytest.mark.parametrize("path", PACKAGED, ids=[p.stem for p in PACKAGED])
def test_packaged_experiment_is_named_after_its_file_and_its_claims_name_points_of_both_modes(path: Path) -> None:
    experiment = load(path)
    assert experiment.name == path.stem
    meta = experiment.spec.meta
    assert meta.title
    if meta.paper is not None:
        assert meta.name.startswith(f"{meta.paper.lower()}-")
    else:
        assert meta.notes, "a study of our own names the sources of its claims in its notes"
    assert experiment.spec.claim, "every packaged experiment states at least one claim"
    for quick in (False, True):
        points = {tuple(sorted(p.coords.items())) for p in experiment.points(quick)}
        for claim in experiment.spec.claim:
            wanted = experiment.select(claim.where)
            if claim.than is not None and claim.than.where:
                wanted += [{**w, **experiment.select(claim.than.where)[0]} for w in wanted]
            for coords in wanted:
                assert any(set(coords.items()) <= set(p) for p in points), (claim.text, coords, quick)


# -- bad fields ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        (
            {
                "meta": {
                    "name": "fast08-fig99",
                    "paper": "FAST08",
                    "section": "4",
                    "figure": "F",
                    "title": "t",
                    "colour": 1,
                }
            },
            "meta.colour: unknown field",
        ),
        (
            {"meta": {"name": "figure six", "paper": "FAST08", "section": "4", "figure": "F", "title": "t"}},
            "meta.name: must be lower-case letters, digits and single hyphens, at most 64 characters",
        ),
        ({"meta": {"name": "buffer-study\n"}}, "meta.name: must be lower-case letters"),
        ({"meta": {"name": "Buffer-Study"}}, "meta.name: must be lower-case letters"),
        ({"meta": {"name": "-study"}}, "meta.name: must be lower-case letters"),
        ({"meta": {"name": "a" * 65}}, "meta.name: must be lower-case letters, digits and single hyphens, at most 64"),
        ({"meta": {"name": "mine", "section": "4"}}, "meta: give paper, section and figure together"),
        ({"meta": {"name": "fast08-fig99", "paper": "FAST08"}}, "meta: give paper, section and figure together"),
        ({"case": [{"name": "a", "preset": "vegas"}]}, "case.preset: unknown 'vegas'; one of linux"),
        ({"case": [{"name": "a", "preset": "linux", "set": {"tcp.rto_mni": "1ms"}}]}, "case[0].set.tcp.rto_mni"),
        (
            {"meta": {"name": "fast08-fig99", "paper": "SIGCOMM", "section": "4", "figure": "F", "title": "t"}},
            "meta.paper: must be",
        ),
        ({"sweep": {"servers": [1], "tcp.rto_min": ["soon"]}}, "sweep.tcp.rto_min[0]: tcp.rto_min"),
        ({"sweep": {"servers": [1], "tcp.rto_mni": ["1ms"]}}, "sweep.tcp.rto_mni[0]: tcp.rto_mni: unknown setting"),
        ({"base": {"switch": {"buffer": "1B"}}}, "base.switch.buffer"),
        ({"preset": "vegas"}, "preset: unknown 'vegas'; one of linux, linux-2.6, ns2"),
        ({"run": {"seeds": 0}}, "run.seeds: "),
        ({"run": {"metrics": ["goodput"]}}, "run.metrics: unknown metric 'goodput'"),
        ({"claim": [{"text": "x", "metric": "goodput_mbps", "op": "=~", "value": 1}]}, "claim[0].op: must be"),
        (
            {"claim": [{"text": "x", "metric": "goodput_mbps", "op": "<"}]},
            "claim[0]: give exactly one of value or than",
        ),
        (
            {"claim": [{"text": "x", "metric": "goodput_mbps", "op": "<", "value": 1, "where": {"buffer": 1}}]},
            "claim[0].where: 'buffer' is not an axis",
        ),
        (
            {"plot": [{"x": "servers", "y": "goodput_mbps", "series": "tcp.recovery"}]},
            "plot[0].where: 'tcp.recovery' is not an axis",
        ),
        ({"plot": [{"x": "servers"}]}, "plot[0]: give exactly one of y (metrics) or setting"),
        (
            {"plot": [{"x": "servers", "y": "goodput_mbps", "setting": "workload.sru"}]},
            "plot[0]: give exactly one of y",
        ),
        (
            {"plot": [{"x": "servers", "setting": "workload.sru", "kind": "bar"}]},
            "plot[0]: a setting is drawn as a line",
        ),
        ({"plot": [{"x": "servers", "setting": "workload.srv"}]}, "plot[0].setting: workload.srv: unknown setting"),
        ({"quick": {"sweep": {"links": [1]}}}, "quick.sweep.links: not an axis"),
        (
            {"case": [{"name": "a", "per": {"links": {"workload.sru": ["1KB"]}}}]},
            "case[0].per.links: not an axis of [sweep]",
        ),
        (
            {"case": [{"name": "a", "per": {"servers": {"workload.sru": ["1KB"]}}}]},
            "case[0].per.servers.workload.sru: needs one value per value of [sweep].servers (2)",
        ),
        (
            {"case": [{"name": "a", "per": {"servers": {"workload.sru": ["1KB", "big"]}}}]},
            "case[0].per.servers.workload.sru[1]: workload.sru",
        ),
        (
            {
                "case": [{"name": "a", "per": {"servers": {"workload.sru": ["1KB", "2KB"]}}}],
                "quick": {"sweep": {"servers": [3]}},
            },
            "case[0].per.servers: quick.sweep.servers has values not in [sweep].servers",
        ),
        (
            {"reference": [{"where": {"servers": 4}, "value": 1, "source": "s"}]},
            "reference[0]: give exactly one of metric or setting",
        ),
        (
            {"reference": [{"metric": "goodput_mbps", "setting": "workload.sru", "value": 1, "source": "s"}]},
            "reference[0]: give exactly one of metric or setting",
        ),
        (
            {"reference": [{"metric": "goodput_mbps", "value": "1KB", "source": "s"}]},
            "reference[0]: the value of a metric is a number",
        ),
        ({"reference": [{"setting": "workload.sru", "value": "huge", "source": "s"}]}, "reference[0]"),
    ],  # fmt: skip
)
def test_a_bad_field_is_rejected_in_one_line_naming_it(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(ExperimentError) as e:
        load(tiny(**changes))
    message = str(e.value)
    assert field in message, message
    assert "\n" not in message


def test_a_preset_lies_under_the_base_table() -> None:
    """``preset = "ns2"``: the points run ns-2.35's stack, and what ``[base]`` and the axes say wins."""
    exp = load(tiny(preset="ns2", base={"blocks": 1, "tcp": {"init_cwnd": 3}}))
    (tcp,) = {(p.scenario.tcp.mss, p.scenario.tcp.init_cwnd, p.scenario.tcp.rto_flavor) for p in exp.points(False)}
    assert tcp == (1000, 3, "ns2")


def test_the_cli_rejects_a_bad_file_with_exit_2_and_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(Path(PACKAGED[0]).read_text().replace('op = "', 'op = "≈', 1))
    code = main(["sweep", str(bad), "--out", str(tmp_path / "results")])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.startswith("error: bad.toml: claim[0].op: must be") and err.count("\n") == 1, err
    assert not (tmp_path / "results").exists(), "nothing is written for a rejected file"


def test_an_unknown_experiment_name_is_one_line_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "fast08-fig77"]) == 2
    assert "fast08-fig77: no such experiment" in capsys.readouterr().err


# -- claims as rules -------------------------------------------------------------------


def summary(rows: list[tuple[int, float, float]]) -> pd.DataFrame:
    """A summary table over (servers, tcp.rto_min) with goodput means."""
    frame = pd.DataFrame(rows, columns=["servers", "tcp.rto_min", "goodput_mbps_mean"])
    missing = {f"{m}_mean": math.nan for m in METRICS if f"{m}_mean" not in frame}
    return pd.concat([frame, pd.DataFrame(missing, index=frame.index)], axis=1)


def verdicts(claims: list[dict[str, Any]], table: pd.DataFrame | None) -> list[str]:
    return [v.verdict for v in evaluate(load(tiny(claim=claims)), table)]


def test_a_comparison_with_a_neighbouring_point_holds_or_fails_on_the_numbers() -> None:
    claim = tiny()["claim"]
    assert verdicts(claim, summary([(4, 0.001, 800.0), (4, 0.2, 50.0)])) == ["holds"]
    assert verdicts(claim, summary([(4, 0.001, 40.0), (4, 0.2, 50.0)])) == ["fails"]


def test_verdicts_are_counted_in_the_order_holds_fails_disputed() -> None:
    assert count_verdicts(["holds", "disputed", "fails", "disputed"]) == "1 holds, 1 fails, 2 disputed"


def test_a_claim_whose_points_are_missing_is_not_run() -> None:
    claim = tiny()["claim"]
    assert verdicts(claim, None) == ["not-run"]
    assert verdicts(claim, summary([(4, 0.001, 800.0)])) == ["not-run"]
    assert verdicts(claim, summary([(4, 0.001, math.nan), (4, 0.2, 50.0)])) == ["not-run"]


def test_list_values_need_all_points_or_any_point() -> None:
    table = summary([(1, 0.2, 900.0), (4, 0.2, 50.0)])
    rule = {
        "text": "t",
        "metric": "goodput_mbps",
        "where": {"servers": [1, 4], "tcp.rto_min": "200ms"},
        "op": "<",
        "value": 100,
    }
    assert verdicts([rule], table) == ["fails"]
    assert verdicts([{**rule, "quantifier": "any"}], table) == ["holds"]


def test_approx_scale_and_offset_follow_the_paper_s_wording() -> None:
    table = summary([(1, 0.2, 900.0), (4, 0.2, 640.0), (4, 0.001, 700.0)])
    about = {
        "text": "about 65%",
        "metric": "goodput_mbps",
        "where": {"servers": 4, "tcp.rto_min": "200ms"},
        "op": "approx",
        "value": 650,
        "rel_tol": 0.05,
    }
    tenth = {
        "text": "below 1/10",
        "metric": "goodput_mbps",
        "where": {"servers": 4, "tcp.rto_min": "200ms"},
        "op": "<",
        "than": {"where": {"servers": 1}, "scale": 0.1},
    }
    minus = {
        "text": "100 less",
        "metric": "goodput_mbps",
        "where": {"servers": 4, "tcp.rto_min": "200ms"},
        "op": "<=",
        "than": {"where": {"tcp.rto_min": "1ms"}, "offset": -50},
    }
    assert verdicts([about, tenth, minus], table) == ["holds", "fails", "holds"]


def test_a_stated_difference_is_checked_in_the_metric_s_unit_not_as_a_share_of_what_is_left() -> None:
    """GIP §VI-C: "about 0.1 Gbps smaller than that in Fig. 8": 100 Mbps less, give or take 50, whatever the baseline."""
    table = summary([(1, 0.2, 900.0), (4, 0.2, 790.0), (8, 0.2, 91.0), (8, 0.001, 79.0), (4, 0.001, 700.0)])
    about_100_less = {
        "text": "about 0.1 Gbps smaller",
        "metric": "goodput_mbps",
        "where": {"servers": [4, 8], "tcp.rto_min": "1ms"},
        "op": "approx",
        "than": {"where": {"tcp.rto_min": "200ms"}, "offset": -100},
        "abs_tol": 50,
    }
    at_4 = {**about_100_less, "where": {"servers": 4, "tcp.rto_min": "1ms"}}
    assert verdicts([about_100_less, at_4], table) == ["fails", "holds"]


def test_approx_takes_one_tolerance() -> None:
    both = {"text": "t", "metric": "goodput_mbps", "op": "approx", "value": 1, "rel_tol": 0.1, "abs_tol": 1}
    with pytest.raises(ValueError, match="exactly one of rel_tol or abs_tol"):
        Claim.model_validate(both)


def test_verdict_counts_read_as_english() -> None:
    assert count_verdicts(["holds", "fails", "fails"]) == "1 holds, 2 fail"
    assert count_verdicts(["fails", "not-run", "holds", "holds"]) == "2 hold, 1 fails, 1 not run"
    assert count_verdicts([]) == ""


def test_where_values_are_read_in_any_unit() -> None:
    experiment = load(tiny())
    assert experiment.select({"tcp.rto_min": ["0.2s", "200ms", "1ms"]}) == [
        {"tcp.rto_min": 0.2}, {"tcp.rto_min": 0.2}, {"tcp.rto_min": 0.001},
    ]  # fmt: skip


@pytest.mark.slow
def test_every_experiment_reproduces_in_quick_mode_with_a_verdict_for_each_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["reproduce", "--all", "--quick", "--json", "--out", str(tmp_path)]) == 0
    manifests = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [m["name"] for m in manifests] == [p.stem for p in PACKAGED]
    for m in manifests:
        assert m["done"] == m["points"] and len(m["figures"]) == 2
        assert all(c["verdict"] in ("holds", "fails", "disputed") for c in m["claims"]), m["name"]


def test_a_point_records_its_sender_side_losses() -> None:
    """RUDE §4's kernel patch drops data segments at the sender: the count is a metric of every point."""
    from incast.scenario import Scenario
    from incast.sweep import simulate

    lossy = {"servers": 1, "blocks": 1, "workload": {"sru": "1MiB"}, "tcp": {"send_loss": 0.05, "delayed_ack": "off"}}
    assert simulate(Scenario.parse(lossy).to_dict())["send_losses"] > 0
    lossy["tcp"]["send_loss"] = 0  # type: ignore[index]
    assert simulate(Scenario.parse(lossy).to_dict())["send_losses"] == 0


def test_a_point_records_when_its_rude_flows_turned_polite_and_nan_without_them() -> None:
    """RUDE §3.2: rude_polite_s is when the last rude flow stopped marking; NaN when no flow was rude."""
    from incast.scenario import Scenario
    from incast.sweep import simulate

    tcp = {"delayed_ack": "off", "rude_allowed": True, "rude": True, "rude_off_at": "1ms", "rude_off": "now"}
    rude = {"servers": 1, "blocks": 1, "workload": {"sru": "1MiB"}, "tcp": tcp}
    assert simulate(Scenario.parse(rude).to_dict())["rude_polite_s"] == pytest.approx(0.001)
    polite = {"servers": 1, "blocks": 1, "workload": {"sru": "1MiB"}}
    assert math.isnan(simulate(Scenario.parse(polite).to_dict())["rude_polite_s"])


# -- settings that follow an axis, and references to settings or computed values ---------------------


def test_a_case_setting_can_follow_a_swept_axis_value_for_value() -> None:
    experiment = load(
        tiny(
            sweep={"servers": [1, 4]},
            case=[{"name": "per", "per": {"servers": {"workload.sru": ["8KB", "2KB"]}}}, {"name": "fixed"}],
            claim=[],
            quick={"sweep": {"servers": [4]}},
        )
    )
    sru = {(p.coords["servers"], p.coords["case"], p.seed): p.scenario.workload.sru for p in experiment.points()}
    assert sru[(1, "per", 1)] == 8000 and sru[(4, "per", 2)] == 2000
    assert sru[(4, "fixed", 1)] == 32768, "a case without per keeps the base"
    assert [p.scenario.workload.sru for p in experiment.points(quick=True) if p.coords["case"] == "per"] == [2000, 2000]


def test_a_reference_may_give_a_setting_the_paper_plots_and_be_marked_computed() -> None:
    ref = {"setting": "workload.sru", "where": {"servers": 4}, "value": "2KB", "computed": True, "source": "eq. (1)"}
    experiment = load(tiny(reference=[ref]))
    (got,) = experiment.spec.reference
    assert got.metric is None and got.setting == "workload.sru" and got.computed
    stated = load(tiny(reference=[{"metric": "goodput_mbps", "where": {"servers": 4}, "value": 650, "source": "§4.3"}]))
    assert not stated.spec.reference[0].computed


def test_a_setting_is_read_at_a_point_and_drawn_beside_its_references(tmp_path: Path) -> None:
    from incast.plots import draw

    ref = {"setting": "workload.sru", "where": {"servers": 4}, "value": "2KB", "computed": True, "source": "eq. (1)"}
    experiment = load(
        tiny(
            sweep={"servers": [1, 4]},
            case=[{"name": "per", "per": {"servers": {"workload.sru": ["8KB", "2KB"]}}}],
            claim=[],
            reference=[ref],
            plot=[{"x": "servers", "setting": "workload.sru", "series": "case"}],
        )
    )
    assert experiment.setting_values("workload.sru") == {(1, "per"): 8000, (4, "per"): 2000}
    table = pd.DataFrame({"servers": [1, 4], "case": ["per", "per"], "goodput_mbps_mean": [1.0, 2.0]})
    png, svg = draw(experiment, table, tmp_path)
    assert png.stat().st_size > 0 and "paper, computed" in svg.read_text()


def test_a_point_records_the_fraction_of_requests_hit_by_a_timeout() -> None:
    """SIGCOMM09 2.2: blocks during which the read's connection timed out, background flows' timeouts aside."""
    from incast.scenario import Scenario
    from incast.sweep import simulate

    latency = {
        "servers": 1,
        "duration": "1s",
        "workload": {"sru": "1000B"},
        "background": {"tcp_flows": 10, "tcp_to_server": True},
        "switch": {"buffer": "128pkt"},
    }
    point = simulate(Scenario.parse(latency).to_dict())
    assert 0 < point["timed_out_block_fraction"] < 0.1
    assert point["block_time_ms.max"] >= 200 and point["background_goodput_mbps"] > 800
    alone = simulate(Scenario.parse({**latency, "background": {}}).to_dict())
    assert alone["timed_out_block_fraction"] == 0


def gip_a_ss_ca(senders: int) -> float:
    """GIP §VIII eq. (2)-(3) at the paper's setting: C = 1 Gbps, D = 100 us, B = 64 KB, S_p = 1 KB."""
    w = (1e9 * 100e-6 / 8 / 1024 + 64) / senders
    return float(2 ** (math.log2(w / 2) + 1) - 1 + 3 / 8 * w * w + 3 / 4 * w)


def test_gip_fig21_references_are_the_closed_form_of_section_viii() -> None:
    assert gip_a_ss_ca(2) == pytest.approx(608, rel=0.01), "§VIII: A_ss+ca is about 608 packets for i = 2"
    experiment = load("gip-fig21")
    refs = experiment.spec.reference
    assert refs and all(r.setting == "workload.sru" and r.computed for r in refs)
    closed = next(c for c in experiment.spec.case if c.name == "S_u = closed-form minimum")
    for ref in refs:
        i = int(ref.where["servers"])  # type: ignore[arg-type]
        want = gip_a_ss_ca(i) / i * 1000  # packets of 1 KB, 1000 bytes of stripe unit each (MSS 1000)
        assert experiment._probe.with_overrides({"workload.sru": ref.value}).workload.sru == round(want)
        assert closed.per["servers"]["workload.sru"][experiment.spec.sweep["servers"].index(i)] == ref.value


def test_a_copied_experiment_must_be_renamed_so_the_papers_results_are_never_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from incast.cli import main
    from incast.experiment import experiments_dir

    copy = tmp_path / "my-question.toml"
    copy.write_text((experiments_dir() / "fast08-fig06.toml").read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["sweep", str(copy), "--out", str(tmp_path / "results"), "--quick"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: my-question.toml: meta.name: 'fast08-fig06' is a packaged experiment's name")
    assert err.count("\n") == 1 and not (tmp_path / "results" / "fast08-fig06").exists()
