"""The point cache: an entry that is not a small regular file of plain JSON, or not signed with this
user's key, is recomputed, never trusted and never fatal to the sweep."""

from __future__ import annotations

import hashlib
import json
import math
import os
import resource
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from incast.experiment import load

from conftest import two_point_experiment

TINY = two_point_experiment("fast08-fig97", 97)


def _limit_memory() -> None:
    """A child that would read a whole device or sparse file fails with MemoryError, not the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


def sweep_in_child(tmp_path: Path) -> tuple[int, dict[str, object], str]:
    """``incast sweep`` of the two-point experiment, in a child with bounded memory and time."""
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    proc = subprocess.run(
        [sys.executable, "-m", "incast", "sweep", str(path), "--out", str(tmp_path / "out"), "--jobs", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=240,
        preexec_fn=_limit_memory,
    )
    manifest = json.loads(proc.stdout) if proc.returncode == 0 else {}
    return proc.returncode, manifest, proc.stderr


def first_entry(tmp_path: Path) -> Path:
    """Run the sweep once and return the cache entry of its first point."""
    code, _, err = sweep_in_child(tmp_path)
    assert code == 0, err
    return sorted((tmp_path / "out" / "fast08-fig97" / "cache").glob("*.json"))[0]


def _dev_zero(entry: Path) -> None:
    entry.unlink()
    entry.symlink_to("/dev/zero")


def _sparse(entry: Path) -> None:
    with entry.open("r+b") as f:
        f.truncate(3 * 10**9)


def _fifo(entry: Path) -> None:
    entry.unlink()
    os.mkfifo(entry)


def _deep(entry: Path) -> None:
    entry.write_text("[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize("damage", [_dev_zero, _sparse, _fifo, _deep], ids=["dev-zero", "sparse-3GB", "fifo", "deep"])
def test_a_cache_entry_that_is_a_device_a_huge_file_a_fifo_or_deeply_nested_is_recomputed(
    tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    entry = first_entry(tmp_path)
    damage(entry)
    code, manifest, err = sweep_in_child(tmp_path)
    assert code == 0, err
    assert (manifest["cached"], manifest["computed"]) == (1, 1)
    assert f"warning: {entry}: " in err and "recomputing the point" in err and "Traceback" not in err, err
    assert stat.S_ISREG(entry.lstat().st_mode), "the recomputed point is cached again as a plain file"


def _resign_with_sha256(doc: dict[str, object]) -> None:
    """What anyone can do to an entry whose checksum is a plain hash: recompute it."""
    body = json.dumps({"key": doc["key"], "metrics": doc["metrics"]}, sort_keys=True, allow_nan=True)
    doc["checksum"] = hashlib.sha256(body.encode()).hexdigest()


@pytest.mark.parametrize("goodput", [900.0, math.nan], ids=["edited", "nan"])
def test_an_edited_metric_with_its_checksum_recomputed_is_not_used(tmp_path: Path, goodput: float) -> None:
    entry = first_entry(tmp_path)
    doc = json.loads(entry.read_text())
    original = doc["metrics"]["goodput_mbps"]
    doc["metrics"]["goodput_mbps"] = goodput
    _resign_with_sha256(doc)
    entry.write_text(json.dumps(doc, allow_nan=True))
    code, manifest, err = sweep_in_child(tmp_path)
    assert code == 0, err
    assert manifest["computed"] == 1
    again = json.loads(entry.read_text())
    assert again["metrics"]["goodput_mbps"] == original


def test_the_cache_key_is_created_once_readable_by_its_owner_only(tmp_path: Path) -> None:
    from incast.cache import KEY_BYTES, key_path

    first_entry(tmp_path)
    key = key_path()
    assert key.parent == Path(os.environ["XDG_CONFIG_HOME"]) / "incast"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == KEY_BYTES
    before = key.read_bytes()
    code, manifest, _ = sweep_in_child(tmp_path)
    assert code == 0 and manifest["cached"] == 2 and key.read_bytes() == before


def test_an_entry_signed_by_another_key_is_recomputed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A results folder copied from another user: their entries fail this user's MAC."""
    from incast.sweep import sweep

    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    experiment = load(path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "them"))
    theirs = sweep(experiment, out=tmp_path / "out", jobs=1)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "me"))
    mine = sweep(experiment, out=tmp_path / "out", jobs=1)
    assert (theirs.computed, mine.computed, mine.cached) == (2, 2, 0)


def test_points_an_engine_of_other_source_computed_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout that changes the engine but not its version: the older engine's points are computed again."""
    import incast.cache
    from incast._core import engine_build, engine_version
    from incast.sweep import sweep

    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    experiment = load(path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    version, digest = engine_build().split("+")
    assert version == engine_version() and len(digest) == 16
    monkeypatch.setattr(incast.cache, "engine_build", lambda: f"{version}+{'0' * 16}")
    older = sweep(experiment, out=tmp_path / "out", jobs=1)
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    now = sweep(experiment, out=tmp_path / "out", jobs=1)
    again = sweep(experiment, out=tmp_path / "out", jobs=1)
    assert (older.computed, now.computed, now.cached, again.cached) == (2, 2, 0, 2)
