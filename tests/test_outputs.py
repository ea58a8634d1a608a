"""An experiment's tables, figures and run.json are replaced as one set: a failed write leaves the old set."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from incast import sweep as sweeps
from incast.experiment import load

from conftest import two_point_experiment

TINY = two_point_experiment("fast08-fig95", 95, plot=True)

SET = ("points.parquet", "points.csv", "summary.parquet", "summary.csv", "run.json", "figure.svg", "figure.png")


def snapshot(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in SET}


@pytest.mark.parametrize("failing", ["summary.csv", "run.json", "figure.png"])
def test_a_full_disk_while_writing_leaves_the_previous_outputs_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    sweeps.reproduce(load(path), out=tmp_path / "out", jobs=1)
    folder = tmp_path / "out" / "fast08-fig95"
    before = snapshot(folder)
    path.write_text(TINY.replace("servers = [1, 4]", "servers = [1, 4, 8]"))

    real_write_text = Path.write_text
    real_savefig = Figure.savefig
    real_csv = sweeps._write_csv

    def full(p: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(p))

    def write_text(self: Path, *args: object, **kwargs: object) -> int:
        if self.name == failing or self.name.startswith(f".{failing}"):
            full(self)
        return real_write_text(self, *args, **kwargs)  # type: ignore[arg-type]

    def savefig(self: object, fname: object, *args: object, **kwargs: object) -> None:
        if Path(str(fname)).name == failing:
            full(fname)
        real_savefig(self, fname, *args, **kwargs)

    def write_csv(frame: object, p: Path) -> None:
        if p.name == failing or p.name.startswith(f".{failing}"):
            full(p)
        real_csv(frame, p)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", write_text)
    monkeypatch.setattr("matplotlib.figure.Figure.savefig", savefig)
    monkeypatch.setattr(sweeps, "_write_csv", write_csv)
    with pytest.raises(OSError, match="No space left"):
        sweeps.reproduce(load(path), out=tmp_path / "out", jobs=1)
    monkeypatch.undo()
    assert snapshot(folder) == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["fast08-fig95"], "a temporary folder is left"
    assert len(list((folder / "cache").glob("*.json"))) == 3, "the new point stays cached for the next run"


def test_a_new_set_replaces_the_old_one_and_keeps_the_cache_and_other_files(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    sweeps.reproduce(load(path), out=tmp_path / "out", jobs=1)
    folder = tmp_path / "out" / "fast08-fig95"
    (folder / "notes.txt").write_text("mine")
    path.write_text(TINY.replace("servers = [1, 4]", "servers = [1, 4, 8]"))
    result = sweeps.sweep(load(path), out=tmp_path / "out", jobs=1)
    assert (result.cached, result.computed) == (2, 1)
    names = sorted(p.name for p in folder.iterdir())
    tables = ["points.csv", "points.parquet", "summary.csv", "summary.parquet"]
    assert names == sorted(["cache", "notes.txt", "run.json", *tables]), "a sweep without figures drops stale ones"
    assert (folder / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["fast08-fig95"]


def test_a_cache_left_in_a_temporary_folder_by_a_killed_run_is_taken_back(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    sweeps.sweep(load(path), out=tmp_path / "out", jobs=1)
    folder = tmp_path / "out" / "fast08-fig95"
    leftover = tmp_path / "out" / "fast08-fig95.tmp-abc123"
    leftover.mkdir()
    (folder / "cache").rename(leftover / "cache")  # killed between moving the cache and renaming the set in
    again = sweeps.sweep(load(path), out=tmp_path / "out", jobs=1)
    assert (again.cached, again.computed) == (2, 0)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["fast08-fig95"]
