"""Judge calibrations: agreement with human labels, stored over time."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aieval.store._connection import Connection
from aieval.store._encoding import dumps, loads

__all__ = ["CalibrationRow", "CalibrationTable"]


@dataclass(slots=True, frozen=True)
class CalibrationRow:
    """One stored judge calibration: agreement with human labels at a point in time."""

    id: int
    judge: str
    model: str | None
    model_version: str | None
    prompt_version: str | None
    run_id: str | None
    labels: str | None
    n: int
    metrics: dict[str, Any]
    created_at: float


class CalibrationTable(Connection):
    """The ``judge_calibrations`` table of a :class:`~aieval.store.Store`."""

    def record_calibration(
        self,
        *,
        judge: str,
        n: int,
        metrics: Mapping[str, Any],
        model: str | None = None,
        model_version: str | None = None,
        prompt_version: str | None = None,
        run_id: str | None = None,
        labels: str | None = None,
    ) -> int:
        """Store a calibration of ``judge`` and return its id."""
        with self._lock:
            try:
                row = self._db.one(
                    "INSERT INTO judge_calibrations (judge, model, model_version, prompt_version,"
                    " run_id, labels, n, metrics, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " RETURNING id",
                    (
                        (
                            judge,
                            model,
                            model_version,
                            prompt_version,
                            run_id,
                            labels,
                            n,
                            dumps(dict(metrics)),
                            time.time(),
                        )
                    ),
                )
            except self._db.errors as exc:
                raise self._failed(exc) from exc
        assert row is not None
        return int(row[0])

    def calibrations(self, judge: str | None = None, *, limit: int = 50) -> list[CalibrationRow]:
        """Stored calibrations (of ``judge``, if given), most recent first."""
        where, args = ("WHERE judge = ?", [judge]) if judge else ("", [])
        rows = self._read(
            "SELECT id, judge, model, model_version, prompt_version, run_id, labels, n,"
            f" metrics, created_at FROM judge_calibrations {where}"
            " ORDER BY created_at DESC, id DESC LIMIT ?",
            (*args, limit),
        )
        return [
            CalibrationRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], loads(r[8]), r[9])
            for r in rows
        ]
