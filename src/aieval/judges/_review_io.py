"""Reviewers' labels as JSONL: one :class:`~aieval.core.ReviewLabel` per line.

``{"judge": DIGEST, "run_id": ..., "sample_id": ..., "reviewer": ..., "passed": true|false|null,
"score": 0..1|null, "note": "...", "labelled_at": SECONDS}``. A file read is data from
someone else: each line is checked (an object with exactly these fields, each given once, of
these types; either ``passed`` or a ``score``; a reviewer of printable text; a note of at most
:data:`MAX_NOTE` characters; a time between :data:`EARLIEST` and the read's time plus
:data:`CLOCK_SKEW`) and a bad one is refused naming its line and field; no field is ever run,
fetched or opened. A line without ``labelled_at`` takes the time of the read, so a label
imported now counts as newer than any certificate made before it (drift is checked on it).
The older calibration format (``{"id", "score"}``) is read by
:func:`aieval.judges.load_labels`, unchanged.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aieval._json import DuplicateKeyError, unique_keys
from aieval.core import ReviewLabel
from aieval.errors import ConfigError, ReviewError

__all__ = [
    "CLOCK_SKEW",
    "EARLIEST",
    "LABEL_FIELDS",
    "MAX_NOTE",
    "MAX_REVIEWER",
    "read_review_labels",
    "write_review_labels",
]

#: The longest note a label keeps (characters); a longer one is refused, never cut.
MAX_NOTE = 4000
#: The earliest label time accepted (2000-01-01 UTC): an older one is a mistake or a backdating.
EARLIEST = 946_684_800.0
#: How far past the reader's clock a label's time may lie (seconds): clocks differ a little,
#: but a label from the future would always win "latest" and always count as newer.
CLOCK_SKEW = 300.0
#: The longest reviewer name (characters).
MAX_REVIEWER = 200
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


def _label(row: Any, where: str, now: float) -> ReviewLabel:
    if not isinstance(row, dict):
        raise ReviewError(f"{where}: a label is a JSON object, not {type(row).__name__}")
    unknown = sorted(set(row) - set(LABEL_FIELDS))
    if unknown:
        raise ReviewError(
            f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; a label's fields are "
            f"{', '.join(LABEL_FIELDS)}"
        )
    for name in _TEXTS:
        value = row.get(name)
        if not isinstance(value, str) or not value or len(value) > 1000:
            raise _field_error(where, name, "must be a text of 1 to 1000 characters")
    reviewer = row["reviewer"]
    if len(reviewer) > MAX_REVIEWER or not reviewer.isprintable():
        raise _field_error(
            where, "reviewer", f"must be printable text of at most {MAX_REVIEWER} characters"
        )
    passed, score = row.get("passed"), row.get("score")
    if passed is not None and not isinstance(passed, bool):
        raise _field_error(where, "passed", "must be true, false or null")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise _field_error(where, "score", "must be a number from 0 to 1 or null")
    if passed is not None and score is not None:
        raise ReviewError(
            f"{where}: fields 'passed' and 'score' are both set; a label gives either passed "
            "(true or false) or a score from 0 to 1"
        )
    note = row.get("note", "")
    if not isinstance(note, str) or len(note) > MAX_NOTE:
        raise _field_error(where, "note", f"must be a text of at most {MAX_NOTE} characters")
    # No time: the label is taken now, so it counts as newer than an older certificate.
    at = row.get("labelled_at")
    at = now if at is None else at
    latest = now + CLOCK_SKEW
    if (
        isinstance(at, bool)
        or not isinstance(at, int | float)
        or not math.isfinite(at)
        or not EARLIEST <= at <= latest
    ):
        raise _field_error(
            where,
            "labelled_at",
            f"must be a time in seconds since the epoch from {EARLIEST:.0f} (2000-01-01) to "
            f"{latest:.0f} (now, give or take {CLOCK_SKEW:.0f} s), got {at!r}",
        )
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


def read_review_labels(path: str | Path, *, now: float | None = None) -> list[ReviewLabel]:
    """The labels of a JSONL file, each line checked.

    ``now`` (seconds since the epoch; the clock when left out) is the read's time: a line
    without ``labelled_at`` takes it, and no label may be later than it plus
    :data:`CLOCK_SKEW`.

    Raises:
        ReviewError: the file cannot be read, or a line is not a valid label (named by its
            number, with what to fix).
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReviewError(f"{source}: cannot read the labels file: {exc}") from exc
    read_at = time.time() if now is None else now
    labels = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source} line {number}"
        if len(line) > _MAX_LINE:
            raise ReviewError(f"{where}: longer than {_MAX_LINE} characters")
        try:
            row = json.loads(line, object_pairs_hook=unique_keys)
        except DuplicateKeyError as exc:
            raise ReviewError(
                f"{where}: field {exc.key!r} is given twice; give each field once"
            ) from exc
        except ValueError as exc:
            raise ReviewError(f"{where}: not JSON ({exc})") from exc
        labels.append(_label(row, where, read_at))
    return labels
