"""Reviewers' labels as JSONL: one :class:`~aieval.core.ReviewLabel` per line.

``{"judge": DIGEST, "run_id": ..., "sample_id": ..., "reviewer": ..., "passed": true|false|null,
"score": 0..1|null, "note": "...", "labelled_at": SECONDS}``. A file read is data from
someone else: each line is checked (an object with exactly these fields, of these types, a
note of at most :data:`MAX_NOTE` characters) and a bad one is refused naming its line; no
field is ever run, fetched or opened. The older calibration format (``{"id", "score"}``) is
read by :func:`aieval.judges.load_labels`, unchanged.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aieval.core import ReviewLabel
from aieval.errors import ConfigError, ReviewError

__all__ = ["LABEL_FIELDS", "MAX_NOTE", "read_review_labels", "write_review_labels"]

#: The longest note a label keeps (characters); a longer one is refused, never cut.
MAX_NOTE = 4000
#: The longest line read (characters): a label is small.
_MAX_LINE = 64 * 1024
LABEL_FIELDS = (
    "judge",
    "run_id",
    "sample_id",
    "reviewer",
    "passed",
    "score",
    "note",
    "labelled_at",
)
_TEXTS = ("judge", "run_id", "sample_id", "reviewer")


def label_dict(label: ReviewLabel) -> dict[str, Any]:
    """A label as the JSON object of one line."""
    return {name: getattr(label, name) for name in LABEL_FIELDS}


def write_review_labels(labels: Iterable[ReviewLabel], path: str | Path) -> int:
    """Write ``labels`` to ``path`` as JSONL; return how many."""
    n = 0
    with Path(path).open("w", encoding="utf-8", newline="\n") as out:
        for label in labels:
            out.write(json.dumps(label_dict(label), ensure_ascii=False) + "\n")
            n += 1
    return n


def _field_error(where: str, name: str, what: str) -> ReviewError:
    return ReviewError(f"{where}: field {name!r} {what}")


def _label(row: Any, where: str) -> ReviewLabel:
    if not isinstance(row, dict):
        raise ReviewError(f"{where}: a label is a JSON object, not {type(row).__name__}")
    unknown = sorted(set(row) - set(LABEL_FIELDS))
    if unknown:
        raise ReviewError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}")
    for name in _TEXTS:
        value = row.get(name)
        if not isinstance(value, str) or not value or len(value) > 1000:
            raise _field_error(where, name, "must be a text of 1 to 1000 characters")
    passed, score = row.get("passed"), row.get("score")
    if passed is not None and not isinstance(passed, bool):
        raise _field_error(where, "passed", "must be true, false or null")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise _field_error(where, "score", "must be a number from 0 to 1 or null")
    note = row.get("note", "")
    if not isinstance(note, str) or len(note) > MAX_NOTE:
        raise _field_error(where, "note", f"must be a text of at most {MAX_NOTE} characters")
    at = row.get("labelled_at", 0.0)
    if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at):
        raise _field_error(where, "labelled_at", "must be a time in seconds since the epoch")
    try:
        return ReviewLabel(
            judge=row["judge"],
            run_id=row["run_id"],
            sample_id=row["sample_id"],
            reviewer=row["reviewer"],
            passed=passed,
            score=None if score is None else float(score),
            note=note,
            labelled_at=float(at),
        )
    except ConfigError as exc:
        raise ReviewError(f"{where}: {exc}") from exc


def read_review_labels(path: str | Path) -> list[ReviewLabel]:
    """The labels of a JSONL file, each line checked.

    Raises:
        ReviewError: the file cannot be read, or a line is not a valid label (named by its
            number, with what to fix).
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReviewError(f"{source}: cannot read the labels file: {exc}") from exc
    labels = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source} line {number}"
        if len(line) > _MAX_LINE:
            raise ReviewError(f"{where}: longer than {_MAX_LINE} characters")
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ReviewError(f"{where}: not JSON ({exc})") from exc
        labels.append(_label(row, where))
    return labels
