"""``GET /api/runs/{run_id}/judges``: the viewer's run page "Judges" panel.

Per judge of the run: its agreement with the reviewers' labels (design-weighted kappa, TPR and
TNR with 95% intervals, the base rate and counts), its status, and the run's raw and corrected
pass rate: :func:`aieval.judges.stored_summaries`, what ``aieval judges RUN`` prints. It only
reads (no certificate is recorded: ``aieval judges`` does that). A run without a judge gets an
empty list. The security middleware gives it the other run endpoints' rights (the server's own
token; never a review or upload token).
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from aieval.errors import RunNotFoundError
from aieval.judges import JudgeRun, run_judges, stored_summaries
from aieval.server._responses import SafeJSONResponse
from aieval.store import Store

__all__ = ["judges_api"]

judges_api = APIRouter(prefix="/api")


@judges_api.get("/runs/{run_id}/judges")
def get_run_judges(run_id: str, request: Request) -> SafeJSONResponse:
    """Every judge of the run with its figures, or ``[]`` when the run has none."""
    store: Store = request.app.state.store
    try:
        row = store.get_run(run_id)
    except RunNotFoundError:
        raise RunNotFoundError(f"no run with id {run_id!r}") from None
    if not run_judges(row.config):  # nothing to read: the page shows no panel
        return SafeJSONResponse({"run_id": row.id, "judges": []})
    run = JudgeRun(row.id, row.config, list(store.iter_samples(row.id, texts=False)))
    summaries = stored_summaries(store, [run])
    body = {"run_id": row.id, "judges": [s.to_dict() for s in summaries]}
    return SafeJSONResponse(request.app.state.redactor.redact(body))
