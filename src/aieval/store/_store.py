"""The run store: runs, samples, scores and model calls, each sample committed as it ends.

:class:`Store` joins the tables' parts: runs (``_runs``), sample writes and reads
(``_sample_writes``, ``_sample_reads``, ``_column_reads``, ``_pair_reads``), a run's sums in
SQL (``_run_sums``, ``_pair_sums``), judge calibrations (``_calibrations``), review queues
and labels (``_reviews``) and copying runs between stores (``_transfer``), all over one
connection (``_connection``) to a backend (``_backend``: SQLite or PostgreSQL).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from aieval.store._baseline import BaselineChoice, BaselineFinder
from aieval.store._calibrations import CalibrationRow, CalibrationTable
from aieval.store._certificates import CertificateTable
from aieval.store._column_reads import ColumnReader
from aieval.store._connection import default_db_path
from aieval.store._graded_sums import GradedSumsReader
from aieval.store._kept_columns import KeptColumnsReader
from aieval.store._online_alerts import OnlineAlertTable
from aieval.store._online_review import OnlineReviewTable
from aieval.store._online_rules import OnlineRulesTable
from aieval.store._online_spend import OnlineSpendTable
from aieval.store._online_status import OnlineStatusTable
from aieval.store._online_work import OnlineWorkTable
from aieval.store._pair_details import PairDetailsReader
from aieval.store._pair_reads import PairReader
from aieval.store._pair_sums import PairSumsReader
from aieval.store._report_sums import ReportSumsReader
from aieval.store._reviews import ReviewTable
from aieval.store._runs import RunRow, RunTable, new_run_id
from aieval.store._sample_reads import SampleReader
from aieval.store._sample_writes import SampleWriter
from aieval.store._transfer import TransferTable

__all__ = ["BaselineChoice", "CalibrationRow", "RunRow", "Store", "default_db_path", "new_run_id"]

log = logging.getLogger("aieval")


class Store(
    BaselineFinder,
    RunTable,
    SampleWriter,
    SampleReader,
    ColumnReader,
    PairReader,
    KeptColumnsReader,
    PairSumsReader,
    ReportSumsReader,
    GradedSumsReader,
    PairDetailsReader,
    CalibrationTable,
    ReviewTable,
    CertificateTable,
    TransferTable,
    OnlineStatusTable,
    OnlineSpendTable,
    OnlineAlertTable,
    OnlineReviewTable,
    OnlineRulesTable,
    OnlineWorkTable,
):
    """A run store: an SQLite file (WAL mode, safe for several readers and one writer), or a
    PostgreSQL database named by a ``postgresql://`` URL (many writers; extra ``postgres``).

    ``Store(path, untrusted=True)`` reads an SQLite file someone else made (a CI artifact)
    without trusting it: read-only, refused unless its schema is aieval's (no view, trigger or
    foreign table), each query stopped after a time limit.

    Example:
        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "runs.db"))
        >>> run_id = store.create_run(name="demo")
        >>> store.get_run(run_id).status
        'running'
    """

    def finish_run(
        self,
        run_id: str,
        *,
        status: str,
        metrics: Mapping[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        """Record how a run ended (``completed``, ``failed`` or ``interrupted``), then build
        its rollups (what its reports read: see :mod:`aieval.store._rollups`); an interrupted
        run's are left to its first report (a stopped run ends at once)."""
        super().finish_run(run_id, status=status, metrics=metrics, error=error)
        self._refresh_statistics()
        if status != "interrupted":
            self.keep_rollups(run_id)

    def _refresh_statistics(self) -> None:
        """The planner's statistics of the tables a run's reads join, brought up to date where
        the run's writes left them far off; never fails the run's end."""
        try:
            with self._lock:
                self._db.refresh_statistics(("samples", "scores", "sample_values"))
        except Exception as exc:
            log.warning("the store's statistics were left to the server's own analyze: %s", exc)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
