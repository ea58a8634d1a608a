"""CMU09 §7's randomized timeout and capped back-off in ns-2: the patched ns-2.35 ``ns2_build`` makes, and the
harness's choice of it."""

from __future__ import annotations

import os
import shutil
import subprocess
import urllib.error
from pathlib import Path

import pytest

import incast
from incast.presets import with_preset
from incast.reference import ns2, ns2_build

NS2 = ns2.Ns2()


def scenario(**tcp: object) -> incast.Scenario:
    return incast.Scenario(**with_preset("ns2", {"servers": 4, "blocks": 3, "tcp": tcp}))


def test_the_randomized_timeout_runs_in_the_patched_ns2_and_every_other_scenario_in_debians(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Only a scenario with tcp.rto_randomize needs the patch; the rest keep Debian's ns and their Tcl."""
    patched = tmp_path / "ns"
    monkeypatch.setattr(ns2_build, "binary", lambda: patched)
    monkeypatch.setattr(ns2.shutil, "which", lambda name: f"/usr/bin/{name}")
    randomized, plain = scenario(rto_randomize=True), scenario()
    assert ns2.binary_for(randomized) == str(patched)
    assert ns2.binary_for(plain) == "/usr/bin/ns"
    # CMU09 §7: "timeout = RTO + (rand(0.5) * RTO)", the patched agents' rto_random_.
    assert "\nAgent/TCP set rto_random_ 0.5\n" in ns2.script(randomized)
    assert "rto_random_" not in ns2.script(plain)
    assert NS2.refusals(randomized) == []
    assert any(n.startswith("tcp.rto_randomize: ns-2.35 from Debian's source") for n in NS2.notes(randomized))
    assert not any(n.startswith("tcp.rto_randomize") for n in NS2.notes(plain))


def test_a_recorded_randomized_run_is_bound_to_the_patches_it_ran_with(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Tcl names the build's digest, so a changed patch leaves a recorded point unused."""
    s = scenario(rto_randomize=True)
    before = NS2.fingerprint(s)
    monkeypatch.setattr(ns2_build, "PATCHES", (*ns2_build.PATCHES[:1],))
    assert NS2.fingerprint(s) != before
    assert NS2.fingerprint(scenario()) == NS2.fingerprint(scenario()), "Debian's runs do not read the patches"


def test_a_build_that_cannot_start_says_why_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    # Every package present but TclCL's tools, whatever this machine has installed.
    present = tmp_path / "present"
    present.touch()
    packages = dict.fromkeys(ns2_build.PACKAGES, str(present)) | {"tclcl": str(tmp_path / "no-tcl2c++")}
    monkeypatch.setattr(ns2_build, "PACKAGES", packages)
    monkeypatch.setattr(ns2_build.os, "geteuid", lambda: 1000)
    with pytest.raises(ns2.Ns2Error, match=r"^ns-2 build: missing tclcl; install with apt-get install -y tclcl$"):
        ns2.binary_for(scenario(rto_randomize=True))


def test_a_refused_download_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def refuse(url: str, timeout: float) -> None:
        raise urllib.error.URLError("Connection refused")

    monkeypatch.setattr(ns2_build.urllib.request, "urlopen", refuse)
    with pytest.raises(ns2_build.BuildError) as e:
        ns2_build._download(tmp_path / "ns2.tar.xz")
    assert str(e.value) == f"ns-2 build: cannot download {ns2_build.SOURCE_URL}: Connection refused"
    assert not list(tmp_path.iterdir()), "no partial tarball is left"


def _run(ns: str, tcl: str, tmp: Path) -> tuple[str, bytes, bytes]:
    (tmp / "run.tcl").write_text(tcl, encoding="utf-8")
    done = subprocess.run([ns, "run.tcl"], cwd=tmp, capture_output=True, text=True, check=True)
    return done.stdout, (tmp / "queue.tr").read_bytes(), (tmp / "vars.tr").read_bytes()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("ns") is None and not os.environ.get("CI"), reason="Debian's ns2 is not installed")
def test_the_patch_is_inert_at_rto_random_0_and_randomizes_at_0_5(tmp_path: Path) -> None:
    """Builds the patched ns (minutes, once). With rto_random_ 0 it runs a script with timeouts as Debian's ns
    does, to the byte of every trace; with 0.5 the timeouts come at other times."""
    patched = str(ns2_build.binary())
    s = scenario(rto_min="200us", rto_tick="1us")
    s = s.with_overrides({"servers": 16, "switch.buffer": "32KB"})
    tcl = ns2.script(s, tmp_path / "queue.tr", tmp_path / "vars.tr")
    debian = _run("ns", tcl, tmp_path)
    assert "counters 0 " not in debian[0], "the scenario has timeouts for the timer to matter"
    assert _run(patched, tcl, tmp_path) == debian
    randomized = ns2.script(s.with_overrides({"tcp.rto_randomize": True}), tmp_path / "queue.tr", tmp_path / "vars.tr")
    assert _run(patched, randomized, tmp_path)[2] != debian[2]


def test_a_capped_back_off_runs_in_the_patched_ns2_with_max_backoff_the_factor(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """CMU09 §7 backs off "until the maximum factor of 64 * RTO": 6 doublings in the engine, max_backoff_ 64
    in the patched agents; Debian's rtt_backoff doubles until maxrto_, so the default alone stays there."""
    patched = tmp_path / "ns"
    monkeypatch.setattr(ns2_build, "binary", lambda: patched)
    monkeypatch.setattr(ns2.shutil, "which", lambda name: f"/usr/bin/{name}")
    capped, both = scenario(rto_max_backoff=6), scenario(rto_max_backoff=6, rto_randomize=True)
    assert ns2.binary_for(capped) == ns2.binary_for(both) == str(patched)
    assert ns2.binary_for(scenario()) == "/usr/bin/ns"
    assert "\nAgent/TCP set max_backoff_ 64\n" in ns2.script(capped)
    assert "rto_random_" not in ns2.script(capped)
    assert "\nAgent/TCP set rto_random_ 0.5\nAgent/TCP set max_backoff_ 64\n" in ns2.script(both)
    assert "\nAgent/TCP set max_backoff_ 1\n" in ns2.script(scenario(rto_max_backoff=0)), "no doubling at all"
    assert not any("max_backoff_" in ns2.script(s) for s in (scenario(), scenario(rto_randomize=True)))
    assert any("max_backoff_ 64·RTO (6 doublings)" in n for n in NS2.notes(capped))
    assert not any(n.startswith("tcp.rto_max_backoff") for n in NS2.notes(scenario()))


def test_a_capped_run_is_bound_to_the_patches_it_ran_with(monkeypatch: pytest.MonkeyPatch) -> None:
    s = scenario(rto_max_backoff=6)
    before = NS2.fingerprint(s)
    monkeypatch.setattr(ns2_build, "PATCHES", (*ns2_build.PATCHES[:1],))
    assert NS2.fingerprint(s) != before


def test_a_cap_beyond_the_agents_int_is_refused_in_one_line() -> None:
    assert NS2.refusals(scenario(rto_max_backoff=30)) == []
    assert [r.setting for r in NS2.refusals(scenario(rto_max_backoff=31))] == ["tcp.rto_max_backoff"]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("ns") is None and not os.environ.get("CI"), reason="Debian's ns2 is not installed")
def test_the_cap_stops_the_back_off_only_where_it_would_go_beyond(tmp_path: Path) -> None:
    """At 16 servers and 200 us no agent backs off more than twice in a row: a cap of 4·RTO (2 doublings) runs
    as Debian's ns, to the byte of every trace, and one of 2·RTO (1 doubling) changes the run."""
    patched = str(ns2_build.binary())
    s = scenario(rto_min="200us", rto_tick="1us").with_overrides({"servers": 16, "switch.buffer": "32KB"})

    def traced(s: incast.Scenario) -> str:
        return ns2.script(s, tmp_path / "queue.tr", tmp_path / "vars.tr")

    debian = _run("ns", traced(s), tmp_path)
    assert _run(patched, traced(s.with_overrides({"tcp.rto_max_backoff": 2})), tmp_path) == debian
    assert _run(patched, traced(s.with_overrides({"tcp.rto_max_backoff": 1})), tmp_path)[2] != debian[2]
