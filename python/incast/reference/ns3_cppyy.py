"""What the ns-3 3.44 harnesses share: ns-3 loaded into cppyy with a harness's C++, and their options' units.

The harnesses (``ns3.py``, the synchronized read; ``ns3_traffic.py``, open-loop
flows and queries) run as scripts under an interpreter with the ``ns3`` wheel
and nothing of ``incast``: this module reads ``incast/units.py`` from beside
its folder for the unit parsers of their options (:data:`size`,
:data:`duration`, :data:`rate`), and :func:`define` loads ns-3 and compiles a
harness's C++ (``cppyy.cppdef``), so the simulation runs at C++ speed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar


def _units_beside() -> ModuleType:
    """``incast/units.py`` loaded from its file: run as a script, a harness has no ``incast`` to import."""
    spec = importlib.util.spec_from_file_location("incast_units", Path(__file__).resolve().parents[1] / "units.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING or __package__:
    from incast import units
else:
    units = _units_beside()

#: IPv4 + TCP headers without options, bytes.
TCP_IP_HEADERS = 40
#: Timestamp option bytes on every segment when timestamps are on.
TS_OPTION = 12
#: PPP header the point-to-point device adds to every packet.
PPP_HEADER = 2

_T = TypeVar("_T")


def _option(parse: Callable[[str], _T]) -> Callable[[str], _T]:
    """An argparse type that parses with ``parse`` and reports its :class:`~incast.units.UnitError` as is."""

    def convert(text: str) -> _T:
        try:
            return parse(text)
        except units.UnitError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return convert


#: Bytes from ``"32KiB"``, ``"256KiB"``, ``"100B"`` (:func:`incast.units.parse_size`).
size = _option(units.parse_size)
#: Seconds from ``"1ms"``, ``"100us"``, ``"0"`` (:func:`incast.units.parse_duration`).
duration = _option(units.parse_duration)
#: Bits per second from ``"1Gbps"``, ``"100Mbps"`` (:func:`incast.units.parse_rate`).
rate = _option(units.parse_rate)


def define(cpp: str, namespace: str) -> Any:
    """Load ns-3, compile ``cpp`` and return its C++ namespace ``namespace``."""
    # Run as a script, a harness's folder heads sys.path and ns3.py would
    # shadow the wheel's ``ns3`` package that ``ns`` imports.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    # cling reports a harmless "Failed to materialize symbols" for ns-3's
    # g_timeInitHelper while ns-3 loads; keep stderr for anything else.
    with tempfile.TemporaryFile(mode="w+b") as err:
        saved = os.dup(2)
        sys.stderr.flush()
        os.dup2(err.fileno(), 2)
        try:
            import cppyy  # type: ignore[import-not-found,import-untyped,unused-ignore]
            from ns import ns  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: F401  (loads ns-3 into cppyy)

            cppyy.cppdef(cpp)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            err.seek(0)
            for line in err.read().decode(errors="replace").splitlines():
                if "runStaticInitializersOnce" not in line:
                    print(line, file=sys.stderr)
    return getattr(cppyy.gbl, namespace)
