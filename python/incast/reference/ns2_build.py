"""ns-2.35 with CMU09 §7's randomized timeout and capped back-off, built from Debian's source of its ``ns2`` package.

CMU09 §7 (Figure 13) ran its simulations in an ns-2 that arms the retransmission
timer for "timeout = RTO + (rand(0.5) * RTO)" and backs off "until the maximum
factor of 64 * RTO"; Debian's ``ns`` (ns2 2.35+dfsg-5) arms it for exactly the
RTO and, with ``rfc2988_`` true, doubles it until ``maxrto_``. :func:`binary`
builds ns-2.35 with two changes of mechanism in tcp/tcp.cc, each behind an
OTcl-bound ``Agent/TCP`` variable whose default 0 leaves the agents as they
were: ``ns2_rto_random.patch``, where ``TcpAgent::set_rtx_timer`` adds
``Random::uniform(rto_random_ * RTO)`` to the timeout ``rtt_timeout()`` gives
(0.5 for the paper's timer), and ``ns2_max_backoff.patch``, where
``TcpAgent::rtt_backoff`` doubles ``t_backoff_`` only while it is below
``max_backoff_`` (64 for the paper's cap).

The source is the upstream tree Debian builds its package from,
``ns2_2.35+dfsg.orig.tar.xz`` from Debian's archive, checked against the
SHA-256 that ``ns2_2.35+dfsg-5.dsc`` gives for it. The build links against
Debian's Tcl 8.6, OTcl and TclCL (:data:`PACKAGES`, installed with apt-get when
run as root, as ``.ci/run`` installs ``ns2``) in place of Debian's packaging
(its ``debian.tar.xz``): configure finds the libraries through a folder of
links beside the tree, the sources compile as C++98 with ``-fpermissive`` and
``USE_INTERP_RESULT`` as GCC 11 and later and Tcl 8.6 need, and
``ns2_tclcl.patch`` turns off ns-2's 64-bit integer variables, which Debian's
TclCL cannot bind (``TclObject::bind`` has no ``int64_t`` overload there), but
keeps the scheduler's event UIDs 64-bit ``long`` as Debian's ``ns`` has them
(``HeapScheduler::lookup(long)``): 32-bit ones end a run of more than 2^31
events with "UID space exhausted".
Only the ``ns`` target is made, at the lowest CPU priority.

The binary goes to ``$XDG_CACHE_HOME/incast/ns2-rand/<digest>/ns``
(``~/.cache/incast/...``), the digest of the source's checksum, the patches and
the build flags, so a changed patch builds anew; a lock file lets one process
build while the others wait. :class:`BuildError` says in one line what is
missing or what failed, with the log's path.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tarfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import IO

from incast.errors import IncastError

__all__ = ["PACKAGES", "PATCHES", "BuildError", "binary", "built", "digest"]

#: Debian's source tarball of ns-2.35 and its SHA-256, as ``ns2_2.35+dfsg-5.dsc`` lists it.
SOURCE_URL = "http://deb.debian.org/debian/pool/main/n/ns2/ns2_2.35+dfsg.orig.tar.xz"
SOURCE_SHA256 = "a3a097194c87fedbf2a7d3c8520790dc8688874cad0373af2db0ed33e463d52e"
#: The folder the tarball unpacks to.
TREE = "ns-2.35"
#: The patches applied in order (package data): the randomized timer, the back-off's cap, then the link
#: against Debian's TclCL (with the scheduler's 64-bit event UIDs).
PATCHES = ("ns2_rto_random.patch", "ns2_max_backoff.patch", "ns2_tclcl.patch")
#: How the sources compile with GCC 11 and later and Tcl 8.6 (the Makefile's ``CPP`` and ``CCOPT``).
CPP = "g++ -std=gnu++98 -fpermissive"
CCOPT = "-O2 -w -Wno-write-strings -DUSE_INTERP_RESULT"
#: The tools the build runs.
TOOLS = ("g++", "gcc", "make", "patch")
#: Debian's packages the build needs, by a file each one installs.
PACKAGES = {
    "tcl-dev": "/usr/include/tcl8.6/tcl.h",
    "tk-dev": "/usr/include/tcl8.6/tk.h",
    "libotcl1-dev": "/usr/include/otcl.h",
    "libtclcl1-dev": "/usr/include/tclcl/tclcl.h",
    "tclcl": "/usr/bin/tcl2c++",
    "libpcap0.8-dev": "/usr/include/pcap/pcap.h",
    "libxext-dev": "/usr/include/X11/extensions/Xext.h",
    "libxt-dev": "/usr/include/X11/Intrinsic.h",
    "g++": "/usr/bin/g++",
    "make": "/usr/bin/make",
    "patch": "/usr/bin/patch",
}
#: The libraries configure looks for in ``../lib`` (``TCL_LIB_PLACES``), under the names it tries.
LIBRARIES = {
    "libtcl8.6.so": "libtcl8.6.so",
    "libtk8.6.so": "libtk8.6.so",
    "libotcl1.14.so": "libotcl.so",
    "libtclcl.so": "libtclcl.so",
}


class BuildError(IncastError):
    """The patched ns-2 cannot be built here; the message is one line."""


def digest() -> str:
    """What the build depends on: the source's checksum, the patches and the flags (16 hex digits)."""
    h = hashlib.sha256(f"{SOURCE_SHA256}\n{CPP}\n{CCOPT}\n".encode())
    for name in PATCHES:
        h.update(_patch(name).encode())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/incast/ns2-rand``, or ``~/.cache/incast/ns2-rand``."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "incast" / "ns2-rand"


def built() -> Path | None:
    """The patched ``ns`` if it is built for the present patches, else None (nothing is built)."""
    ns = cache_dir() / digest() / "ns"
    return ns if os.access(ns, os.X_OK) else None


def binary() -> Path:
    """The patched ``ns``, built first if it is not (minutes: download, configure and make)."""
    home = cache_dir() / digest()
    ns = home / "ns"
    if os.access(ns, os.X_OK):
        return ns
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BuildError(f"ns-2 build: cannot create {home}: {e.strerror}") from None
    with _locked(home / "lock"):
        if not os.access(ns, os.X_OK):
            _build(home, ns)
    return ns


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _patch(name: str) -> str:
    return resources.files("incast.reference").joinpath(name).read_text(encoding="utf-8")


def _build(home: Path, ns: Path) -> None:
    _require()
    tarball = home / Path(SOURCE_URL).name
    if not tarball.exists():
        _download(tarball)
    work = home / "build"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    with tarfile.open(tarball) as t:
        t.extractall(work, filter="data")
    tree, log = work / TREE, home / "build.log"
    with log.open("w") as out:
        for name in PATCHES:
            _step(out, log, f"patch {name}", ["patch", "-p1", "-i", "-"], tree, stdin=_patch(name))
        deps = _links(work)
        configure = ["./configure", f"--with-otcl={deps}", f"--with-tclcl={deps}"]
        _step(out, log, "configure", configure, tree)
        jobs = str(os.cpu_count() or 1)
        _step(out, log, "make", ["make", f"-j{jobs}", "ns", f"CPP={CPP}", f"CCOPT={CCOPT}"], tree)
    (tree / "ns").replace(ns)
    shutil.rmtree(work, ignore_errors=True)


def _require() -> None:
    """One line naming what the build lacks; as root with apt-get, Debian's packages are installed first."""
    missing = [package for package, path in PACKAGES.items() if not Path(path).exists()]
    if missing and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for argv in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *missing]):
            subprocess.run(argv, env=env, capture_output=True, check=False)
        missing = [package for package, path in PACKAGES.items() if not Path(path).exists()]
    if missing:
        raise BuildError(
            f"ns-2 build: missing {', '.join(missing)}; install with apt-get install -y {' '.join(missing)}"
        )
    absent = [tool for tool in TOOLS if shutil.which(tool) is None]
    if absent:
        raise BuildError(f"ns-2 build: {', '.join(absent)} not on PATH")


def _download(tarball: Path) -> None:
    partial = tarball.with_suffix(".part")
    try:
        with urllib.request.urlopen(SOURCE_URL, timeout=60) as r, partial.open("wb") as f:
            shutil.copyfileobj(r, f)
    except (urllib.error.URLError, OSError) as e:
        partial.unlink(missing_ok=True)
        reason = getattr(e, "reason", None) or getattr(e, "strerror", None) or e
        raise BuildError(f"ns-2 build: cannot download {SOURCE_URL}: {reason}") from None
    got = hashlib.sha256(partial.read_bytes()).hexdigest()
    if got != SOURCE_SHA256:
        partial.unlink()
        raise BuildError(f"ns-2 build: {SOURCE_URL} has SHA-256 {got}, not Debian's {SOURCE_SHA256}")
    partial.replace(tarball)


def _links(work: Path) -> Path:
    """``work/lib`` (the ``../lib`` configure searches) with the system's libraries, and ``work/deps``
    for ``--with-otcl`` and ``--with-tclcl``: their headers, ``tcl2c++`` and that ``lib``."""
    lib, deps = work / "lib", work / "deps"
    libdir = _libdir()
    lib.mkdir()
    for name, target in LIBRARIES.items():
        (lib / name).symlink_to(libdir / target)
    (deps / "include").mkdir(parents=True)
    (deps / "bin").mkdir()
    (deps / "lib").symlink_to(lib)
    for header in [Path("/usr/include/otcl.h"), *sorted(Path("/usr/include/tclcl").glob("*.h"))]:
        (deps / "include" / header.name).symlink_to(header)
    (deps / "bin" / "tcl2c++").symlink_to(PACKAGES["tclcl"])
    return deps


def _libdir() -> Path:
    """The folder holding Debian's ``libtcl8.6.so``: the multiarch one GCC names, or /usr/lib."""
    done = subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True, check=False)
    for folder in (Path("/usr/lib") / done.stdout.strip(), Path("/usr/lib64"), Path("/usr/lib")):
        if all((folder / target).exists() for target in LIBRARIES.values()):
            return folder
    raise BuildError(f"ns-2 build: no folder holds {', '.join(LIBRARIES.values())}")


def _step(out: IO[str], log: Path, what: str, argv: list[str], cwd: Path, stdin: str | None = None) -> None:
    """Run one step of the build into the log, at the lowest CPU priority; a failure names its last error."""
    out.write(f"$ {' '.join(argv)}\n")
    out.flush()
    done = subprocess.run(
        argv, cwd=cwd, input=stdin, stdout=out, stderr=subprocess.STDOUT, text=True, preexec_fn=_lowest, check=False
    )
    if done.returncode != 0:
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines() or [""]
        last = next((line for line in reversed(lines) if "error" in line.lower()), lines[-1])
        raise BuildError(f"ns-2 build: {what} failed (status {done.returncode}): {last.strip()}; see {log}")


def _lowest() -> None:
    os.nice(19)


if __name__ == "__main__":
    import sys

    try:
        print(binary())
    except BuildError as e:
        print(e, file=sys.stderr)
        sys.exit(2)
