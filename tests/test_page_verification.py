"""A stale validation page is brought current by ``--verify`` only when its results did not move.

``docs/verify.py`` recomputes what of a page is deterministic and compares it with the saved numbers;
these tests run ``docs/ns3_fidelity.py``'s verification on a copy of its record in a temporary tree,
with the recomputation replaced by one that gives the run's own numbers (an engine whose results did
not move), and check the testbed plans' comparison, where only documented renames may differ.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))

import pages  # noqa: E402
import verify  # noqa: E402

#: What the ns-3 page's fingerprint covers, besides its record.
NS3_FILES = [
    "docs/ns3_fidelity.py",
    "python/incast/reference/ns3.py",
    "python/incast/reference/ns3_cppyy.py",
    "crates/incast-sim/tests/identity/digests.txt",
]


@pytest.fixture
def ns3_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, Path, dict[str, Any]]:
    """The ns-3 generator over a copy of its inputs and record, in a tree of its own, made stale."""
    for name in [*NS3_FILES, "docs/validation/data/ns3.json"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    monkeypatch.setattr(pages, "ROOT", tmp_path)
    monkeypatch.setattr(pages, "PAGES", tmp_path / "docs" / "validation")
    monkeypatch.setattr(pages, "IDENTITY", tmp_path / "crates" / "incast-sim" / "tests" / "identity")
    monkeypatch.setattr(pages, "ENGINE_SRC", tmp_path / "crates" / "incast-sim" / "src")
    with (tmp_path / "python/incast/reference/ns3.py").open("a") as f:
        f.write("# a refactor that moved no result\n")
    import ns3_fidelity

    record = json.loads((tmp_path / "docs/validation/data/ns3.json").read_text())
    saved = {(r["servers"], r["rto_min"], r["blocks"]): r for r in record["results"]["rows"]}

    def unmoved(servers: int, rto: str, blocks: int, seed: int, skew: str) -> dict[str, Any]:
        g, t, d = saved[(servers, rto, blocks)][skew]["incast"][seed - 1]
        return {"goodput_mbps": g, "timeouts": t, "drops": d}

    monkeypatch.setattr(ns3_fidelity, "incast", unmoved)
    return ns3_fidelity, tmp_path, record


def test_a_page_whose_numbers_did_not_move_is_verified(ns3_tree: tuple[ModuleType, Path, dict[str, Any]]) -> None:
    generator, tree, record = ns3_tree
    with pytest.raises(SystemExit, match="inputs changed since it ran"):
        pages.Run.load("ns3.md")
    generator.verify(None, 0)
    page = tree / "docs" / "validation" / "ns3.md"
    assert pages.stale(page) is None
    run, results = pages.Run.load("ns3.md")
    assert results == record["results"]
    assert (run.commit, run.started, run.load_before) == tuple(record["run"][k] for k in ("commit", "started",
                                                                                       "load_before"))  # fmt: skip
    assert len(run.verified) == len(record["run"].get("verified", [])) + 1
    note = run.verified[-1]
    assert note["compared"] == {"incast runs": 2 * len(results["rows"]) * results["seeds"]}
    text = page.read_text()
    assert f"at commit {record['run']['commit']}, started" in text
    assert "Verified, not rerun, at commit unknown" in text
    assert "recomputed and identical to the run's: 8 incast runs" in text


def test_a_tampered_number_is_refused_and_nothing_is_written(ns3_tree: tuple[ModuleType, Path, dict[str, Any]]) -> None:
    generator, tree, record = ns3_tree
    data = tree / "docs" / "validation" / "data" / "ns3.json"
    tampered = copy.deepcopy(record)
    tampered["results"]["rows"][1]["1ns"]["incast"][0][1] += 1
    data.write_text(json.dumps(tampered, indent=1) + "\n")
    before = data.read_bytes()
    with pytest.raises(SystemExit) as refused:
        generator.verify(None, 0)
    message = str(refused.value)
    where = "16 servers, RTO_min 1ms, 50 blocks, seed 1, skew 1ns"
    assert message.startswith(f"error: ns3.md does not verify: {where}.timeouts: saved 6738, recomputed 6737;")
    assert message.endswith("nothing was written: run python docs/ns3_fidelity.py again")
    assert "\n" not in message
    assert data.read_bytes() == before
    assert not (tree / "docs" / "validation" / "ns3.md").exists()


def test_a_reference_run_asked_for_needs_its_interpreter(ns3_tree: tuple[ModuleType, Path, dict[str, Any]]) -> None:
    generator, _, _ = ns3_tree
    with pytest.raises(SystemExit, match="give --ns3-python"):
        generator.verify(None, 1)


PLAN = {
    "sysctls": {"net.ipv4.tcp_sack": "1"},
    "read_options": ["--congestion", "cubic", "--delayed-ack", "on", "--blocks", "40"],
    "serve_options": ["--congestion", "cubic"],
}


def test_a_plan_whose_read_options_were_renamed_only_is_the_same_plan() -> None:
    check = verify.Verification("linux.md", "python docs/linux_fidelity.py --verify")
    now = copy.deepcopy(PLAN)
    now["read_options"][3] = "linux"
    check.same_plan(PLAN, now, "a testbed run")
    assert check.compared["testbed plans"] == 1
    note = check.note("846279e")
    assert [(d["was"], d["now"], d["times"]) for d in note["differences"]] == [
        ("--delayed-ack on", "--delayed-ack linux", 1)
    ]
    assert note["differences"][0]["why"].startswith("976ec8d")


def test_a_plan_field_added_since_the_run_is_the_same_plan_at_the_value_that_sets_up_what_was_run() -> None:
    """Plans saved before the delay line have no shaping.delay_s: 0 (none) is theirs, any other value is not."""
    check = verify.Verification("linux.md", "python docs/linux_fidelity.py --verify")
    saved = {**PLAN, "shaping": {"rate": 200_000_000}}
    check.same_plan(saved, {**saved, "shaping": {"rate": 200_000_000, "delay_s": 0.0}}, "a testbed run")
    assert check.compared["testbed plans"] == 1
    with pytest.raises(verify.Moved, match=r"^a testbed run.shaping.delay_s: saved 0.0, recomputed 0.02$"):
        check.same_plan(saved, {**saved, "shaping": {"rate": 200_000_000, "delay_s": 0.02}}, "a testbed run")


@pytest.mark.parametrize(
    ("part", "index", "value", "named"),
    [
        ("read_options", 3, "off", "read_options[3]: saved 'linux', recomputed 'off'"),
        ("read_options", 5, "20", "read_options[5]: saved '40', recomputed '20'"),
        ("sysctls", "net.ipv4.tcp_sack", "0", "sysctls.net.ipv4.tcp_sack: saved '1', recomputed '0'"),
    ],
)
def test_a_plan_that_sets_up_something_else_is_refused(part: str, index: Any, value: str, named: str) -> None:
    check = verify.Verification("linux.md", "python docs/linux_fidelity.py --verify")
    now: dict[str, Any] = copy.deepcopy(PLAN)
    now["read_options"][3] = "linux"
    now[part][index] = value
    with pytest.raises(verify.Moved, match=f"^{re.escape('a testbed run.' + named)}$"):
        check.same_plan(PLAN, now, "a testbed run")


def test_one_of_a_kind_is_counted_in_the_singular() -> None:
    assert verify.counted(1, "ns-2 class cases (both sides)") == "1 ns-2 class case (both sides)"
    assert verify.counted(1_440, "simulator grid points") == "1,440 simulator grid points"


def test_a_difference_is_named_where_it_first_is() -> None:
    saved = {"equal": {"sack 1ms 32pkt 4": {"sim": [1.0, 2.0], "sim_t": [0, float("nan")]}}}
    fresh = copy.deepcopy(saved)
    assert verify.first_difference(saved, fresh, "grid") is None
    fresh["equal"]["sack 1ms 32pkt 4"]["sim"][1] = 2.0000000001
    assert verify.first_difference(saved, fresh, "grid") == (
        "grid.equal.sack 1ms 32pkt 4.sim[1]: saved 2.0, recomputed 2.0000000001"
    )
