"""Judge certificates: a judge certified against its reviewers' labels, kept over time."""

from __future__ import annotations

from dataclasses import dataclass

from aieval.store._connection import Connection

__all__ = ["CertificateRow", "CertificateTable"]


@dataclass(slots=True, frozen=True)
class CertificateRow:
    """One stored certificate: on ``n`` labelled items the judge's kappa had lower bound
    ``bound`` (at least ``floor``) at ``certified_at`` (see :func:`aieval.judges.certify`)."""

    id: int
    judge: str  # the judge's digest (aieval.core.JudgeKey.digest)
    label: str  # its display name, scorer@model
    n: int
    kappa: float
    bound: float
    floor: float
    certified_at: float


class CertificateTable(Connection):
    """The ``judge_certificates`` table of a :class:`~aieval.store.Store`."""

    def record_certificate(
        self,
        *,
        judge: str,
        label: str,
        n: int,
        kappa: float,
        bound: float,
        floor: float,
        certified_at: float,
    ) -> int:
        """Store a certificate of the judge with digest ``judge`` and return its id."""
        with self._lock:
            try:
                row = self._db.one(
                    "INSERT INTO judge_certificates (judge, label, n, kappa, bound, floor,"
                    " certified_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    (judge, label, n, kappa, bound, floor, certified_at),
                )
            except self._db.errors as exc:
                raise self._failed(exc) from exc
        assert row is not None
        return int(row[0])

    def certificates(self, judge: str | None = None, *, limit: int = 50) -> list[CertificateRow]:
        """Stored certificates (of the judge with digest ``judge``, if given), newest first."""
        where, args = ("WHERE judge = ?", [judge]) if judge else ("", [])
        rows = self._read(
            "SELECT id, judge, label, n, kappa, bound, floor, certified_at FROM judge_certificates"
            f" {where} ORDER BY certified_at DESC, id DESC LIMIT ?",
            (*args, limit),
        )
        return [
            CertificateRow(
                int(r[0]), r[1], r[2], int(r[3]), float(r[4]), float(r[5]), float(r[6]), float(r[7])
            )
            for r in rows
        ]
