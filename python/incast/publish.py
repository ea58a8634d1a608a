"""An experiment's outputs are replaced as one set: all of the new tables, figures and ``run.json``, or none.

The set is written into a folder beside the target, ``DIR.tmp-XXXX``; what
the old folder holds besides the set (the point cache, a user's own files)
is moved into it; then the old folder is renamed away (``DIR.old-XXXX``), the
new one renamed in, and the old one removed. A write that fails (a full
disk) removes the new folder and leaves the old set as it was; a run killed
between the renames leaves the cache in a leftover folder, which the next
sweep of the experiment takes back (:func:`recover`) before removing the
leftovers.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from incast.signals import signals_held

__all__ = ["publish", "recover"]

#: What the old folder keeps across a new set (the resumable point cache).
_CACHE = "cache"


def publish(target: Path, names: Iterable[str], write: Callable[[Path], None]) -> None:
    """Replace the set ``names`` in ``target`` by what ``write(folder)`` writes into a fresh folder.

    Entries of ``target`` not in ``names`` are kept. If ``write`` raises,
    ``target`` is untouched and the new folder removed.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{target.name}.tmp-", dir=target.parent))
    kept: list[str] = []
    try:
        write(staging)
        if target.is_dir():
            ours = set(names)
            for entry in sorted(target.iterdir()):
                if entry.name not in ours and not (staging / entry.name).exists():
                    entry.rename(staging / entry.name)
                    kept.append(entry.name)
        old = staging.with_name(staging.name.replace(".tmp-", ".old-", 1))
        with signals_held():  # Ctrl-C or SIGTERM between the two renames waits for the second
            if target.exists():
                target.rename(old)
            try:
                staging.rename(target)
            except BaseException:
                if old.exists():
                    old.rename(target)
                raise
    except BaseException:
        for name in kept:
            if target.is_dir() and (staging / name).exists():
                (staging / name).rename(target / name)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)


def recover(target: Path) -> None:
    """Take back the cache a killed :func:`publish` left in ``DIR.tmp-*`` or ``DIR.old-*``; remove those folders."""
    if not target.parent.is_dir():
        return
    for leftover in sorted(target.parent.glob(f"{target.name}.tmp-*")) + sorted(
        target.parent.glob(f"{target.name}.old-*")
    ):
        if not leftover.is_dir() or leftover.is_symlink():
            continue
        cache = leftover / _CACHE
        if cache.is_dir() and not (target / _CACHE).exists():
            target.mkdir(parents=True, exist_ok=True)
            cache.rename(target / _CACHE)
        shutil.rmtree(leftover, ignore_errors=True)
