# Developer shortcuts. The README's two commands are all a newcomer needs.
.PHONY: dev test test-rust test-python slow lint bench model-doc

dev:            ## build the Rust core into the current environment (release)
	python3 -m pip install -e '.[dev]'

test: test-rust test-python

test-rust:
	cargo test -p incast-sim -p incast-bench

test-python:
	python3 -m pytest

slow:           ## the long checks of the papers' claims
	python3 -m pytest -m slow

lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	python3 -m ruff check
	python3 -m mypy
	python3 -m mypy.stubtest incast._core

bench:          ## engine speed: data packets and events per wall-clock second
	cargo bench -p incast-sim

model-doc:      ## regenerate docs/MODEL.md from the engine's module headers
	python3 docs/build_model_doc.py
