"""What a report from a run's sums needs beside :class:`~aieval.store.RunSums`: the cost's
sums, the weighted score's 0s and 100s (whether it is a rate), and the failed samples'
verdicts grouped by text (each distinct text decoded once, not each failed sample's)."""

from __future__ import annotations

from dataclasses import dataclass

from aieval.errors import StoreError
from aieval.store._rollups import RollupReader, reasons_key

__all__ = ["FailedVerdict", "ReportSums", "ReportSumsReader"]

#: the sample ids kept per distinct failed verdict: a report lists at most 5 per reason
_IDS_PER_VERDICT = 5


@dataclass(frozen=True, slots=True)
class ReportSums:
    """A run's counts the report's sums path adds to :class:`~aieval.store.RunSums`.

    ``cost_total`` is the samples' known cost summed in the database's order (within a
    relative 1e-12 of the per-sample sum); ``weighted_zeros`` and ``weighted_hundreds`` count
    the weighted scores equal to 0 and 100 exactly; ``not_plain`` the samples whose verdict is
    not a plain one in the typed columns (none: ``plain_run``); ``judged`` the scores whose
    metadata may hold a judge's counts, when the run's rollups know it (none: no judge read).
    """

    samples: int
    not_plain: int
    cost_n: int
    cost_total: float
    weighted_zeros: int
    weighted_hundreds: int
    #: the scores whose metadata may hold a judge's counts (``None``: not counted)
    judged: int | None = None


@dataclass(frozen=True, slots=True)
class FailedVerdict:
    """One distinct list of reasons of the samples that did not pass: its JSON text (the
    verdict's ``reasons``; the whole verdict's when ``whole``), how many samples have it and
    the first of them in dataset order, each as ``(position, sample_id)`` (position: its order
    among the run's failed samples: their rank, or their rank among those a run's rollups
    keep)."""

    text: str
    count: int
    first: tuple[tuple[int, str], ...]
    whole: bool = False


class ReportSumsReader(RollupReader):
    """The reads of :mod:`aieval.store._report_sums`."""

    def report_sums(self, run_id: str) -> ReportSums:
        """The run's sample count, cost sums, weighted 0s and 100s and the samples that are
        not plain verdicts: from the run's rollups (:mod:`aieval.store._rollups`), else in one
        statement."""
        kept = self.ensure_rollups(run_id)
        if kept is not None:
            return ReportSums(
                samples=kept.samples,
                not_plain=kept.not_plain,
                cost_n=kept.cost_n,
                cost_total=kept.cost_total,
                weighted_zeros=kept.weighted_zeros,
                weighted_hundreds=kept.weighted_hundreds,
                judged=kept.judged,
            )
        row = self._read_one(
            "SELECT COUNT(*), SUM(CASE WHEN verdict_plain = 1 AND verdict_passed IS NOT NULL"
            " THEN 0 ELSE 1 END), COUNT(cost), SUM(cost),"
            " SUM(CASE WHEN weighted_score = 0 THEN 1 ELSE 0 END),"
            " SUM(CASE WHEN weighted_score = 100 THEN 1 ELSE 0 END)"
            " FROM samples WHERE run_id = ?",
            (run_id,),
        )
        values = row if row is not None else (0, 0, 0, None, None, None)
        return ReportSums(
            samples=int(values[0] or 0),
            not_plain=int(values[1] or 0),
            cost_n=int(values[2] or 0),
            cost_total=float(values[3] or 0.0),
            weighted_zeros=int(values[4] or 0),
            weighted_hundreds=int(values[5] or 0),
        )

    def failed_verdicts(self, run_id: str) -> list[FailedVerdict]:
        """The distinct reasons of the run's failed samples (``verdict_passed = 0``), each with
        its count and its first 5 samples: grouped in SQL by the verdict's ``reasons`` (a plain
        verdict's text differs by its weighted score; its reasons mostly do not), so a million
        failed samples read back a row per distinct list. A verdict the database cannot read
        as JSON is grouped by its whole text (the caller decodes it and says which sample)."""
        if self.run_totals(run_id) is not None:  # kept by the rollups (valid: read together)
            kept = self._kept_failed_groups(run_id)
            if kept is not None:
                return kept
        try:
            return self._failed_groups(
                run_id, reasons_key(self.location.backend == "postgres"), whole=False
            )
        except StoreError:
            return self._failed_groups(run_id, "verdict", whole=True)

    def _kept_failed_groups(self, run_id: str) -> list[FailedVerdict] | None:
        """The failed groups from the run's rollups: counts by reasons text and each one's
        first samples, numbered by their order among those kept (the run's dataset order).
        ``None`` when they disagree (the rollups changed while read: the caller scans)."""
        counts = {
            str(self._db.text(g)): int(n) for g, n in self._read(
                "SELECT g, n FROM run_rollups WHERE run_id = ? AND part = 'reasons'", (run_id,)
            )
        }  # fmt: skip
        firsts = self._read(
            "SELECT reasons, idx, sample_id FROM run_reason_firsts WHERE run_id = ?"
            " ORDER BY idx, sample_id",
            (run_id,),
        )
        groups: dict[str, list[tuple[int, str]]] = {}
        for position, (text, _, sample_id) in enumerate(firsts, start=1):
            groups.setdefault(str(self._db.text(text)), []).append(
                (position, str(self._db.text(sample_id)))
            )
        if set(groups) != set(counts):
            return None
        return [
            FailedVerdict(text, counts[text], tuple(first[:_IDS_PER_VERDICT]))
            for text, first in groups.items()
        ]

    def _failed_groups(self, run_id: str, key: str, *, whole: bool) -> list[FailedVerdict]:
        failed = (
            f"SELECT {key} AS r, sample_id, idx FROM samples WHERE run_id = ?"
            " AND verdict_passed = 0 AND verdict IS NOT NULL"
        )
        # one pass: each group's count and its first samples, numbered in dataset order
        rows = self._read(
            "SELECT r, pos, sample_id, n FROM (SELECT r, sample_id, pos,"
            " ROW_NUMBER() OVER (PARTITION BY r ORDER BY pos) AS k,"
            " COUNT(*) OVER (PARTITION BY r) AS n FROM"
            " (SELECT r, sample_id, ROW_NUMBER() OVER (ORDER BY idx, sample_id) AS pos"
            f" FROM ({failed}) f) t) u WHERE k <= ? ORDER BY pos",
            (run_id, _IDS_PER_VERDICT),
        )
        text = self._db.text
        groups: dict[str, tuple[int, list[tuple[int, str]]]] = {}
        for group, pos, sample_id, count in rows:
            found = groups.setdefault(str(text(group)), (int(count), []))
            found[1].append((int(pos), str(text(sample_id))))
        return [
            FailedVerdict(key, count, tuple(first), whole) for key, (count, first) in groups.items()
        ]
