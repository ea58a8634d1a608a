"""docs/MODEL.md is the collection of the engine's module headers, never stale."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_model_doc_matches_module_headers() -> None:
    spec = importlib.util.spec_from_file_location("build_model_doc", ROOT / "docs" / "build_model_doc.py")
    assert spec is not None and spec.loader is not None
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    current = (ROOT / "docs" / "MODEL.md").read_text(encoding="utf-8")
    assert current == builder.render(), "docs/MODEL.md is stale: run python docs/build_model_doc.py"
