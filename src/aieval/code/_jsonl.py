"""Line-numbered JSONL reading for problems and completions files (``.jsonl``, ``.jsonl.gz``)."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aieval._json import loads_strict
from aieval.errors import DatasetError

__all__ = ["read_jsonl"]


def read_jsonl(path: Path, what: str) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, parsed row)`` for each non-blank line of ``path``.

    Lines end at ``\\n`` only (a JSON string may hold U+2028 and other line separators).

    Raises:
        DatasetError: the file cannot be read (``what`` says which file it is), or a line is
            not UTF-8 text or not JSON (file and line named).
    """
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as packed:
                data = packed.read()
        else:
            data = path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise DatasetError(f"cannot read {what}: {reason}", source=str(path)) from None
    for number, raw in enumerate(data.split(b"\n"), 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            message = f"not UTF-8 text: {exc.reason} at byte {exc.start + 1} of the line"
            raise DatasetError(message, source=str(path), line=number) from None
        if not text.strip():
            continue
        try:
            yield number, loads_strict(text)
        except ValueError as exc:
            raise DatasetError(f"not valid JSON ({exc})", source=str(path), line=number) from None
