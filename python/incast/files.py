"""Reading files: every file incast reads goes through here, bounded in size and in nesting.

A file is opened with ``O_NONBLOCK`` and checked with ``fstat`` before a byte
is read, so a FIFO, a character device (``/dev/zero``) or a directory is
refused at once instead of blocking or filling memory; at most
:data:`MAX_FILE_BYTES` are read (a sparse 3 GB file is refused by its size,
a file that grows while read by the bytes that arrive). Kernel files under
``/proc`` are regular files of size 0 and read like any other.

Parsed TOML and JSON are nested at most :data:`MAX_DEPTH` levels (arrays and
tables inside each other, dotted keys counted by their parts). The TOML text
is scanned for brackets and dotted keys before ``tomllib`` sees it, and both
parsers run under a guard, so a 5,000-deep array or a 20,000-part dotted
header ends in one line, ``FILE: nested deeper than 64 levels``, and never in
a ``RecursionError`` (``tomllib`` recurses once per level and takes time
quadratic in a dotted key's parts). :func:`check_depth` applies the same cap
to a mapping handed to the API, and refuses one that contains itself.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from incast.errors import ScenarioError

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "FileRefused",
    "check_depth",
    "read_bytes",
    "read_json",
    "read_text",
    "read_toml",
]

#: Largest file read, in bytes (a scenario is a few KiB, a topology file of 2,048 servers a few hundred).
MAX_FILE_BYTES = 16 * 2**20
#: Deepest nesting of arrays and tables accepted (the packaged files nest at most 6 levels).
MAX_DEPTH = 64
#: Values one check of a nested value visits at most (a file of MAX_FILE_BYTES holds fewer).
_MAX_VALUES = MAX_FILE_BYTES

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


class FileRefused(ScenarioError):
    """A file is not a regular file, is too large, is not UTF-8, does not parse or is nested too deep."""


def read_bytes(path: str | Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises ``OSError`` if it cannot be opened and :class:`FileRefused` if it
    is not a regular file or holds more than ``limit`` bytes.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")
            raise FileRefused(f"{path}: is {kind}, not a regular file")
        if st.st_size > limit:
            raise FileRefused(f"{path}: larger than {_size(limit)}")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 2**20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise FileRefused(f"{path}: larger than {_size(limit)}")
    return data


def read_text(path: str | Path, limit: int = MAX_FILE_BYTES) -> str:
    """:func:`read_bytes` decoded as UTF-8; :class:`FileRefused` names the first bad byte."""
    raw = read_bytes(path, limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FileRefused(f"{path}: is not UTF-8 text ({e.reason} at byte {e.start})") from None


def read_toml(path: str | Path, label: str | None = None) -> dict[str, Any]:
    """The table of a TOML file, nested at most :data:`MAX_DEPTH` levels.

    ``label`` names the file in messages (default: its path). Raises
    ``OSError`` if it cannot be opened and :class:`FileRefused` otherwise.
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    name = label or str(path)
    text = read_text(path)
    if _toml_nesting(text) > MAX_DEPTH:
        raise FileRefused(f"{name}: nested deeper than {MAX_DEPTH} levels")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise FileRefused(f"{name}: not valid TOML: {e}") from None
    except RecursionError:
        raise FileRefused(f"{name}: nested deeper than {MAX_DEPTH} levels") from None
    check_depth(data, name)
    return data


def read_json(path: str | Path, limit: int = MAX_FILE_BYTES) -> Any:
    """The value of a JSON file, nested at most :data:`MAX_DEPTH` levels; :class:`FileRefused` if not."""
    text = read_text(path, limit)
    try:
        data = json.loads(text)
    except RecursionError:
        raise FileRefused(f"{path}: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as e:
        raise FileRefused(f"{path}: not valid JSON: {e}") from None
    check_depth(data, str(path))
    return data


def check_depth(value: Any, label: str, limit: int = MAX_DEPTH) -> None:
    """Refuse ``value`` if its mappings and lists nest deeper than ``limit`` or contain themselves.

    Walks without recursion; the message is ``LABEL: nested deeper than N levels``.
    """
    stack: list[tuple[Any, int, frozenset[int]]] = [(value, 0, frozenset())]
    visited = 0
    while stack:
        node, depth, above = stack.pop()
        if isinstance(node, Mapping):
            children: Any = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        if id(node) in above:
            raise ScenarioError(f"{label}: contains itself")
        if depth >= limit:
            raise ScenarioError(f"{label}: nested deeper than {limit} levels")
        visited += len(children)
        if visited > _MAX_VALUES:
            raise ScenarioError(f"{label}: more than {_MAX_VALUES:,} values")
        path = above | {id(node)}
        stack.extend((child, depth + 1, path) for child in children)


#: What the nesting scan of TOML looks at: strings and comments (skipped whole), brackets, and what ends a key.
_TOML_TOKENS = re.compile(
    r'"""(?:\\.|[^\\])*?"""'
    r"|'''.*?'''"
    r'|"(?:\\.|[^"\\\n])*"'
    r"|'[^'\n]*'"
    r"|#[^\n]*"
    r"|[\[{\]}.=,\n]",
    re.S,
)


def _toml_nesting(text: str) -> int:
    """An upper bound of the nesting of a TOML text's deepest value, and of its longest dotted key.

    Counts open ``[``/``{`` outside strings and comments, and the dots of a run
    that no ``=``, ``,``, bracket or line end interrupts (``a.b.c`` has two;
    a float one). :func:`check_depth` checks the exact depth after parsing.
    """
    depth = dots = deepest = 0
    for m in _TOML_TOKENS.finditer(text):
        token = m.group()
        if token in "[{":
            depth += 1
            dots = 0
        elif token in "]}":
            depth = max(depth - 1, 0)
            dots = 0
        elif token == ".":
            dots += 1
        elif token in "=,\n":
            dots = 0
        else:
            continue
        deepest = max(deepest, depth, dots)
    return deepest


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n % 2**20 == 0 else f"{n:,} bytes"
