"""The HTML report: one self-contained page with every experiment's figure and verdicts, and how it renders."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from incast.cli import main
from incast.experiment import packaged


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """FAST08 Table 3 reproduced in quick mode (six short runs); every other experiment not run."""
    out = tmp_path_factory.mktemp("results")
    assert main(["reproduce", "fast08-table3", "--quick", "--json", "--out", str(out), "--jobs", "2"]) == 0
    return out


@pytest.fixture(scope="module")
def page(results: Path) -> str:
    assert main(["report", "--out", str(results)]) == 0
    return (results / "report.html").read_text()


def test_the_report_holds_the_figure_as_an_image_and_every_claim_with_its_verdict(page: str) -> None:
    section = page[page.index("<h3 id='fast08-table3'>") :]
    assert "<img alt='the figure' src='data:image/svg+xml;base64," in section.split("<h3", 2)[1]
    for claim in ("NewReno transmits more data blocks than Reno", "full window losses are the majority"):
        assert claim in section
    verdicts = re.findall(r"<td class='(holds|fails|disputed|not-run)'>", section.split("<h3", 2)[1])
    assert len(verdicts) == 6


def test_the_report_is_laid_out_by_paper_with_each_papers_verdict_counts(page: str) -> None:
    toc = page[page.index("<nav>") : page.index("</nav>")]
    papers = re.findall(r"<li><a href='#paper-(\w+)'>(\w+)</a>: ([^<]*)", toc)
    assert [p for _, p, _ in papers] == ["FAST08", "CMU09", "SIGCOMM09", "RUDE", "GIP", "DCTCP10", "HPCC19", "Studies"]
    counts = {p: c.strip() for _, p, c in papers}
    assert re.fullmatch(r"(\d+ holds?)?(, )?(\d+ fails?)?(, \d+ disputed)?", counts["FAST08"]), counts
    assert counts["GIP"] == "no claims checked"
    headings = re.findall(r"<h2 id='paper-(\w+)'>", page)
    assert headings == [a for a, _, _ in papers]
    fast08 = page[page.index("<h2 id='paper-fast08'>") : page.index("<h2 id='paper-cmu09'>")]
    assert "<h3 id='fast08-table3'>" in fast08 and "Phanishayee" in fast08


def test_each_failing_claim_has_a_one_line_reason_listed_under_its_paper(page: str) -> None:
    fast08 = page[page.index("<h2 id='paper-fast08'>") : page.index("<h2 id='paper-cmu09'>")]
    failing = fast08[fast08.index("<ul class='failing'>") :].split("</ul>", 1)[0]
    item = r"<li><a href='#fast08-table3'>fast08-table3</a>: [^<]+"
    item += r"<div class='reason (?:fails|disputed)-reason'>([^<]+)</div>"
    reasons = re.findall(item, failing)
    section = page[page.index("<h3 id='fast08-table3'>") :].split("<h3", 2)[1]
    assert len(reasons) == section.count("<td class='fails'>") + section.count("<td class='disputed'>") > 0
    for r in reasons:
        where = r"(the only point|\d+ of \d+ points miss; furthest)"
        assert re.fullmatch(where + r": case [^:]+: [\w.]+ [-\d.e+]+, needs .+", r), r


def test_claim_details_name_settings_as_the_papers_do_in_human_units(page: str) -> None:
    details = re.findall(r"<div class='detail'>([^<]*)</div>", page)
    assert details
    for d in details:
        assert not re.search(r"[a-z]\.[a-z_]+=|=(\d{4,}|0\.\d)", d), d  # no dotted names or raw SI values
    assert any(d.startswith("case Reno: ") for d in details), details


def test_an_experiment_not_run_shows_the_command_that_runs_it_and_what_points_took(page: str) -> None:
    section = page[page.index("<h3 id='fast08-fig06'>") :].split("<h3", 2)[1]
    assert "<code>incast reproduce fast08-fig06</code>" in section
    ran = page[page.index("<h3 id='fast08-table3'>") :].split("<h3", 2)[1]
    assert re.search(r"\d+\.\d s to compute", ran) and "of wall time" in ran


def test_the_report_lists_experiments_that_did_not_run(page: str) -> None:
    for path in packaged():
        assert f"<h3 id='{path.stem}'>" in page
    assert page.count("<p class='not-run'>not run</p>") == len(packaged()) - 1


def test_the_report_needs_nothing_beside_itself(page: str) -> None:
    assert not re.search(r"""(src|href)=["']?(https?:|//|file:)""", page)
    assert "<link" not in page and "<script" not in page and "<svg" not in page
    assert set(re.findall(r"<img [^>]*src='([a-z]+):", page)) == {"data"}, "the figures are data URLs, not files"


def test_a_claim_with_a_recorded_reference_run_shows_the_references_figure_under_ours(page: str) -> None:
    section = page[page.index("<h3 id='fast08-table3'>") :].split("<h3", 2)[1]
    assert section.index("alt='the figure'") < section.index("alt='the figure as ns2 ran it'")


def test_the_report_renders_in_headless_chromium(results: Path, page: str, tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed: the rendering check did not run (apt-get install chromium)")
    from matplotlib.image import imread

    shot = tmp_path / "report.png"
    subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,1600",
         f"--screenshot={shot}", (results / "report.html").as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    pixels = imread(shot)[..., :3]
    ink = (pixels < 0.9).any(axis=-1).mean()
    colour = (pixels.max(axis=-1) - pixels.min(axis=-1) > 0.3).mean()
    assert ink > 0.02, "the page rendered (nearly) blank"
    assert colour > 0.0005, "no coloured pixels: the inline figure or the verdicts did not render"


def manifest(**changes: object) -> dict[str, object]:
    """A run.json as ``incast reproduce`` writes it, for fast08-fig06, with ``changes`` applied."""
    doc: dict[str, object] = {
        "name": "fast08-fig06", "mode": "quick", "points": 4, "done": 4, "cached": 0, "computed": 4,
        "wall_s": 1.0, "compute_s": 1.0, "engine": "0.1.0", "tables": {}, "figures": [],
        "claims": [{"text": "a claim", "verdict": "holds", "detail": "d", "reason": ""}],
    }  # fmt: skip
    doc.update(changes)
    return doc


def write_results(root: Path, doc: object, svg: str | None = None) -> Path:
    folder = root / "fast08-fig06"
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps(doc))
    if svg is not None:
        (folder / "figure.svg").write_text(svg)
    return folder / "run.json"


HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def test_nothing_from_the_results_folder_becomes_markup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claim = {"text": HOSTILE, "verdict": "fails", "detail": HOSTILE, "reason": HOSTILE}
    svg = f"<svg xmlns='http://www.w3.org/2000/svg' onload='alert(3)'>{HOSTILE}<script>alert(4)</script></svg>"
    write_results(tmp_path, manifest(claims=[claim], engine=HOSTILE), svg)
    assert main(["report", "--out", str(tmp_path)]) == 0
    page = (tmp_path / "report.html").read_text()
    assert "<script" not in page and "<svg" not in page
    assert not re.search(r"<[^>]*\son\w+=", page), "an event handler in a tag of the page"
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 6  # text and reason twice each, detail, engine
    [data] = re.findall(r"src='data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)'", page)
    assert base64.b64decode(data).decode() == svg, "the figure is the file's bytes, shown only as an image"


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        (manifest(claims=5), "claims: must be a list"),
        ({"done": 1}, "name: missing"),
        (manifest(claims=[{"verdict": "holds", "detail": "", "reason": ""}]), "claims[0].text: missing"),
        (manifest(claims=[{"text": "t", "verdict": "<b>", "detail": "", "reason": ""}]), "claims[0].verdict: must be"),
        (manifest(done="<script>"), "done: must be a whole number"),
        (manifest(done=5), "done: 5 is more than points (4)"),
        ([1, 2], "must be a JSON object"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper than 64 levels"),
    ],
    ids=["claims-5", "done-only", "no-text", "verdict", "done-text", "done-above-points", "list", "deep"],
)
def test_a_malformed_run_json_is_one_warning_and_that_experiment_is_listed_unreadable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: object, field: str
) -> None:
    path = write_results(tmp_path, doc) if not isinstance(doc, str) else None
    if path is None:
        (tmp_path / "fast08-fig06").mkdir()
        path = tmp_path / "fast08-fig06" / "run.json"
        path.write_text(doc)  # type: ignore[arg-type]
    write_results(tmp_path / "other", manifest())
    (tmp_path / "other" / "fast08-fig06").rename(tmp_path / "fast08-fig07")
    assert main(["report", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"warning: {path}: {field}") and err.count("\n") == 1 and "Traceback" not in err, err
    page = (tmp_path / "report.html").read_text()
    section = page[page.index("<h3 id='fast08-fig06'>") :].split("<h3", 2)[1]
    assert "not run" in section and "Its results are unreadable" in section


def test_a_study_of_ones_own_shows_its_title_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "my-study"
    folder.mkdir()
    doc = manifest(name="my-study", meta={"name": "my-study", "title": HOSTILE, "notes": HOSTILE})
    (folder / "run.json").write_text(json.dumps(doc))
    assert main(["report", "--out", str(tmp_path)]) == 0
    page = (tmp_path / "report.html").read_text()
    assert "<h3 id='my-study'>" in page and "<script" not in page
    assert not re.search(r"<[^>]*\son\w+=", page), "an event handler in a tag of the page"
