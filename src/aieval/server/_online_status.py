"""``GET /api/online/status``: what became of each online rule's matched traces, per rule and
window (matched = scored + skipped by reason + pending + claimed), the spend against the
budget, the lag, and whether the rule is stalled (:func:`aieval.online.online_status`, what
``aieval online status`` prints). The viewer's Online page reads it.

It only reads. The security middleware gives it the other reads' rights (the server's own
token; never an upload or review token). It shows the scoring's error messages, redacted like
every answer, and counts, never a trace's content.
"""

from __future__ import annotations

import time

from fastapi import APIRouter, Request

from aieval.online import online_status
from aieval.server._responses import SafeJSONResponse
from aieval.store import Store

__all__ = ["online_status_api"]

online_status_api = APIRouter(prefix="/api/online")


@online_status_api.get("/status")
def get_online_status(request: Request) -> SafeJSONResponse:
    """Every online rule's status now."""
    store: Store = request.app.state.store
    body = online_status(store, time.time()).to_dict()
    return SafeJSONResponse(request.app.state.redactor.redact(body))
