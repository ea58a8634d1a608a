"""How the verbs end and print: one-line errors with their exit status, and numbers in tables."""

from __future__ import annotations

import math
import sys

__all__ = ["EXIT_ENGINE", "EXIT_USAGE", "fail", "ms", "plural", "rate"]

#: Exit status for bad input, as for any usage error.
EXIT_USAGE = 2
#: Exit status when the engine fails on a valid scenario.
EXIT_ENGINE = 1


def fail(message: str, code: int = EXIT_USAGE) -> int:
    """Print ``error: <message>`` as one line on stderr; return ``code``."""
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return code


def plural(n: int, word: str) -> str:
    """``1 experiment``, ``2 experiments``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def rate(mbps: float) -> str:
    """A rate for a reader: ``"949.3 Mbps"``, below 1 Mbps ``"44.4 kbps"`` (a 50 Kbps link's
    goodput is not ``"0.0 Mbps"``), below 1 kbps in bit/s; NaN as a dash."""
    if math.isnan(mbps):
        return "—"
    if mbps >= 1 or mbps == 0:
        return f"{mbps:.1f} Mbps"
    return f"{mbps * 1e3:.1f} kbps" if mbps >= 1e-3 else f"{mbps * 1e6:.1f} bit/s"


def ms(x: float) -> str:
    """Milliseconds with three significant digits below 10, one decimal above; NaN as a dash."""
    return "—" if math.isnan(x) else f"{x:.3g}" if x < 10 else f"{x:.1f}"
