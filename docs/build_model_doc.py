"""Collect every engine module's header into docs/MODEL.md.

Each module of ``crates/incast-sim/src`` opens with a ``//!`` header that says
what it models, what it does deliberately differently, and what it does not
model. This script gathers them into one fidelity checklist, so that the
document cannot drift from the code: ``tests/test_model_doc.py`` fails when
docs/MODEL.md is stale. Regenerate with ``python docs/build_model_doc.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "crates" / "incast-sim" / "src"
TARGET = ROOT / "docs" / "MODEL.md"

PREAMBLE = """\
# What the simulator models, and what it does not

This file is generated from the `//!` header of every module of
`crates/incast-sim/src` by `docs/build_model_doc.py`; edit the headers, not
this file. Each header names what the module **models**, what it does
**deliberately differently** from the RFCs, the papers or real systems (and
why), and what it does **not model** yet.
"""


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return "::".join(["incast_sim", *parts])


def header(path: Path) -> str:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("//!"):
            lines.append(line[4:] if line.startswith("//! ") else line[3:])
        elif lines or line.strip():
            break
    return "\n".join(lines).strip()


def render() -> str:
    sections = [PREAMBLE]
    for path in sorted(SRC.rglob("*.rs")):
        if "tests" in path.relative_to(SRC).parts:
            continue
        text = header(path)
        if text:
            sections.append(f"## `{module_name(path)}`\n\n{text}\n")
    return "\n".join(sections)


def main() -> int:
    TARGET.write_text(render(), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
