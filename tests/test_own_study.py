"""A study of one's own: an experiment that is no paper's figure, lists of seeds and presets on the
command line, a run header that says every setting it changed, and the notebook's views."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

import incast
from incast.cli import main
from incast.experiment import PAPERS, load
from incast.labels import format_number

BUFFER_STUDY = """
[meta]
name = "buffer-study"
title = "Goodput against the switch buffer"

[base]
blocks = 3
[base.workload]
sru = "64KiB"

[sweep]
servers = [1, 8]
"switch.buffer" = ["32KiB", "256KiB"]

[run]
seeds = 2

[[plot]]
x = "servers"
y = "goodput_mbps"
series = "switch.buffer"

[[claim]]
text = "a larger buffer keeps more goodput at 8 servers"
metric = "goodput_mbps"
where = { servers = 8, "switch.buffer" = "256KiB" }
op = ">="
than = { where = { "switch.buffer" = "32KiB" } }
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``incast sweep buffer-study.toml`` and ``incast reproduce fast08-table3 --quick`` into one results folder."""
    root = tmp_path_factory.mktemp("study")
    study = root / "buffer-study.toml"
    study.write_text(BUFFER_STUDY)
    out = root / "results"
    assert main(["sweep", str(study), "--out", str(out), "--jobs", "2", "--json"]) == 0
    assert main(["reproduce", "fast08-table3", "--quick", "--json", "--out", str(out), "--jobs", "2"]) == 0
    return out


# -- an experiment of one's own ------------------------------------------------------------


def test_an_own_experiment_needs_no_paper_and_sweeps_under_its_own_name(swept: Path) -> None:
    experiment = load(swept.parent / "buffer-study.toml")
    assert experiment.spec.meta.paper is None
    summary = pd.read_csv(swept / "buffer-study" / "summary.csv")
    assert len(summary) == 4 and set(summary["seeds"]) == {2}
    manifest = json.loads((swept / "buffer-study" / "run.json").read_text())
    assert manifest["meta"]["title"] == "Goodput against the switch buffer"
    assert [c["verdict"] for c in manifest["claims"]] == ["holds"]


def test_the_figure_of_an_own_experiment_is_titled_by_its_name_and_title_and_names_no_paper(swept: Path) -> None:
    svg = (swept / "buffer-study" / "figure.svg").read_text()
    titles = re.findall(r"<!-- (buffer-study[^>]*) -->", svg)
    assert titles == ["buffer-study: Goodput against the switch buffer, simulated"]
    assert not any(paper in svg for paper in PAPERS) and "§" not in svg


def test_the_report_shows_the_own_experiment_first_then_the_papers(swept: Path) -> None:
    assert main(["report", "--results", str(swept)]) == 0
    page = (swept / "report.html").read_text()
    own = page.index("<h2 id='paper-own'>Your studies</h2>")
    assert own < page.index("<h2 id='paper-fast08'>") and own < page.index("<h2 id='paper-cmu09'>")
    assert "<h3 id='buffer-study'>buffer-study: Goodput against the switch buffer</h3>" in page
    assert page.index("<a href='#paper-own'>") < page.index("<a href='#paper-fast08'>")
    assert page.count("<h3 id='fast08-table3'>") == 1, "a packaged experiment is listed under its paper only"


def test_experiments_lists_the_studies_found_in_any_results_folder_first(
    swept: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["experiments", "--results", str(swept)]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[1].split()[:3] == ["buffer-study", "-", "-"] and "claims hold (full)" in rows[1]
    assert any(r.startswith("fast08-table3 ") and "(quick)" in r for r in rows)
    monkeypatch.chdir(swept.parent)  # the default: ./results
    assert main(["experiments", "--json"]) == 0
    first = json.loads(capsys.readouterr().out.splitlines()[0])
    assert (first["name"], first["paper"], first["claims"]) == ("buffer-study", None, 1)
    monkeypatch.chdir(tmp_path)  # no results here: only the papers' experiments, none run
    assert main(["experiments"]) == 0
    assert "buffer-study" not in capsys.readouterr().out
    assert main(["experiments", "--help"]) == 0
    assert "(default: ./results)" in " ".join(capsys.readouterr().out.split())


def test_a_results_folder_from_before_run_json_kept_the_meta_table_is_shown_by_name(tmp_path: Path) -> None:
    (tmp_path / "old-study").mkdir()
    manifest = {"name": "old-study", "mode": "full", "claims": [], "points": 1, "done": 1, "cached": 1,
                "computed": 0, "wall_s": 0.1, "compute_s": 0.1, "engine": "0", "tables": {}, "figures": []}  # fmt: skip
    (tmp_path / "old-study" / "run.json").write_text(json.dumps(manifest))
    (tmp_path / "Not A Study").mkdir()
    (tmp_path / "Not A Study" / "run.json").write_text(json.dumps(manifest))
    assert main(["report", "--out", str(tmp_path)]) == 0
    page = (tmp_path / "report.html").read_text()
    assert "<h3 id='old-study'>old-study</h3>" in page and "Not A Study" not in page


def test_a_case_may_name_a_preset_that_its_own_settings_and_the_base_override(tmp_path: Path) -> None:
    study = tmp_path / "stacks.toml"
    study.write_text(
        """
preset = "ns2"
[meta]
name = "stacks"
[base]
blocks = 2
tcp = { recovery = "newreno" }
[sweep]
servers = [4]
[[case]]
name = "linux"
preset = "linux"
set = { "tcp.rto_min" = "1ms" }
[[case]]
name = "the file's preset"
"""
    )
    out = tmp_path / "results"
    assert main(["sweep", str(study), "--out", str(out), "--jobs", "1", "--json"]) == 0
    entries = [json.loads(p.read_text()) for p in (out / "stacks" / "cache").glob("*.json")]
    tcp = {e["scenario"]["tcp"]["cc"]: e["scenario"]["tcp"] for e in entries}
    assert set(tcp) == {"cubic", "reno"}, "the linux case runs Cubic, the other ns-2's NewReno"
    assert tcp["cubic"]["rto_min"] == 0.001, "the case's own setting wins over its preset's 200 ms"
    assert tcp["cubic"]["recovery"] == "newreno", "[base] wins over the case's preset (SACK)"
    assert tcp["cubic"]["mss"] == 1460 and tcp["reno"]["mss"] == 1000, "the case's preset replaces the file's"
    assert len(pd.read_csv(out / "stacks" / "summary.csv")) == 2


# -- lists of seeds and presets ----------------------------------------------------------


def runs_of(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    assert main(["run", *args, "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_a_list_of_seeds_runs_once_per_seed_and_the_table_gives_mean_and_sd(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["--servers", "2,8", "--blocks", "3", "--sru", "64KiB"]
    runs = runs_of([*args, "--seed", "1,2,3"], capsys)
    assert [(r["scenario"]["servers"], r["scenario"]["seed"]) for r in runs] == [  # type: ignore[index]
        (2, 1), (2, 2), (2, 3), (8, 1), (8, 2), (8, 3)
    ]  # fmt: skip
    assert main(["run", *args, "--seed", "1,2,3"]) == 0
    out = capsys.readouterr().out
    assert "over seeds 1, 2, 3: mean ± sd (sample standard deviation)" in out
    assert re.search(r"goodput Mbps.*\n.*mean.*\n.*± sd", out)
    goodput = pd.Series([r["goodput_mbps"] for r in runs[3:]], dtype=float)
    row = next(line for line in out.splitlines() if re.match(r"│\s+8 │", line))
    sd_row = out.splitlines()[out.splitlines().index(row) + 1]
    assert f" {goodput.mean():.1f} " in row and f"± {goodput.std(ddof=1):.1f} " in sd_row
    assert "seed=" not in out, "the seeds are the table's, not a setting of the header"


def test_a_list_of_presets_runs_once_per_preset_each_with_its_header(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--servers", "4", "--blocks", "2", "--preset", "linux,ns2"]
    runs = runs_of(args, capsys)
    assert [r["scenario"]["tcp"]["cc"] for r in runs] == ["cubic", "reno"]  # type: ignore[index]
    assert [r["scenario"]["tcp"]["mss"] for r in runs] == [1460, 1000]  # type: ignore[index]
    assert main(["run", *args]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^256KiB SRU, .*, cubic, SACK, preset linux$", out, re.M)
    assert re.search(r"^256KiB SRU, .*, preset ns2$", out, re.M)
    assert re.search(r"│\s+linux │\s+4 │", out) and re.search(r"│\s+ns2 │\s+4 │", out)


def test_an_empty_seed_or_preset_in_a_list_is_one_line_naming_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--servers", "2", "--seed", "1,x"]) == 2
    err = capsys.readouterr().err
    assert err == "error: seed: 'x' is not a whole number; give a seed like 7 or a list like 1,2,3\n"
    assert main(["run", "--servers", "2", "--preset", "linux,"]) == 2
    assert capsys.readouterr().err.startswith("error: preset: 'linux,' has an empty name")


# -- the run header ------------------------------------------------------------------------


def test_the_run_header_lists_every_setting_not_at_its_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--servers", "4", "--blocks", "2", "--seed", "2", "--delayed-ack", "off"]) == 0
    header = capsys.readouterr().out.splitlines()[:2]
    assert header[0].startswith("4 servers, 256KiB SRU, 1Gbps")
    assert header[1] == "settings not at their default: seed=2, blocks=2, tcp.delayed_ack=off"
    assert main(["run", "--servers", "4", "--blocks", "2", "--preset", "linux", "--set", "tcp.timestamps=false"]) == 0
    first, rest = capsys.readouterr().out.split("\ngoodput ")[0].split("\n", 1)
    assert first.endswith(", cubic, SACK, preset linux")
    changed = " ".join(rest.split())  # wrapped at the console's width
    for setting in ("tcp.delayed_ack=linux,", "tcp.rack_tlp=true,", "tcp.clock_granularity=4ms,"):
        assert setting in changed
    assert "tcp.timestamps=" not in changed, "--set put it back to its default"


def test_a_run_at_the_defaults_has_no_line_of_changed_settings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--servers", "2", "--duration", "50ms"]) == 0
    header = capsys.readouterr().out.splitlines()[:2]
    assert header[1].startswith("settings not at their default: duration=50ms")
    assert main(["run", "--servers", "2", "--duration", "1s"]) == 0  # the default duration
    assert not capsys.readouterr().out.splitlines()[1].startswith("settings")


# -- Jupyter -------------------------------------------------------------------------------


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.text: list[str] = []
        self.rows = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag != "br":
            self.open.append(tag)
        self.rows += tag == "tr"

    def handle_endtag(self, tag: str) -> None:
        assert self.open.pop() == tag

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_a_result_shows_in_jupyter_as_its_summary_and_its_flows_table() -> None:
    r = incast.run(servers=5, blocks=2, seed=3)
    page = _Tags()
    page.feed(r._repr_html_())
    assert page.open == [], "every tag is closed"
    text = "".join(page.text)
    assert r.scenario.describe() in text and "settings not at their default: seed=3, blocks=2" in text
    assert f"goodput_mbps{format_number(r.goodput_mbps)}" in text and f"timeouts{r.timeouts}" in text
    figures, header = 13, 1
    assert page.rows == figures + header + len(r.flows) == figures + header + 5


def test_incast_sweep_returns_the_summary_as_a_dataframe_as_its_docstring_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = incast.sweep.table.__doc__ or ""
    example = doc.split("In a notebook::", 1)[1]
    code = "\n".join(line[8:] for line in example.splitlines())
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(code, scope)  # the docstring's own example, run as written
    df = scope["df"]
    assert isinstance(df, pd.DataFrame) and len(df) == 6
    assert {"servers", "switch.buffer", "seeds", "goodput_mbps_mean", "goodput_mbps_ci95"} <= set(df.columns)
    assert (tmp_path / "results" / "buffer-study" / "summary.parquet").exists()
    tiny = {"meta": {"name": "tiny"}, "base": {"blocks": 2}, "sweep": {"servers": [2]}, "run": {"seeds": 2}}
    points = incast.sweep(tiny, points=True)
    assert list(points["seed"]) == [1, 2] and list(points["servers"]) == [2, 2]
