"""Copy runs to a team store or server: ``aieval push`` and :func:`push_runs`.

Example::

    from aieval.push import StoreTarget, push_runs
    from aieval.store import Store

    summary = push_runs(Store("aieval.db"), StoreTarget(Store("team.db")))
    print(summary.line())
"""

from __future__ import annotations

from aieval.push._client import ServerTarget, UploadError
from aieval.push._push import (
    Progress,
    PushSummary,
    PushTarget,
    RunPushed,
    StoreTarget,
    push_runs,
    select_runs,
)
from aieval.push._wire import (
    MAX_JSON_DEPTH,
    MAX_JSON_ITEMS,
    WIRE_VERSION,
    ImportRequest,
    RunIn,
    SampleIn,
    check_json_value,
    json_items,
    run_in,
    sample_in,
)

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_JSON_ITEMS",
    "WIRE_VERSION",
    "ImportRequest",
    "Progress",
    "PushSummary",
    "PushTarget",
    "RunIn",
    "RunPushed",
    "SampleIn",
    "ServerTarget",
    "StoreTarget",
    "UploadError",
    "check_json_value",
    "json_items",
    "push_runs",
    "run_in",
    "sample_in",
    "select_runs",
]
