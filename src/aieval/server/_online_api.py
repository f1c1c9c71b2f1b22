"""``/api/online/rules``: list, add or replace, pause, resume and delete online scoring rules,
and ask for a backfill.

A rule runs judges with the server's keys, so only the server's own token may write here:
upload and review tokens are refused by the security middleware (403), and a server started
without a token refuses every write (403 naming ``--token``), even on loopback. Reads need a
token as every route does. A rule sent here may not import Python, and the workflow or
profile files it names must lie inside the server's dataset roots (docs/online.md, "Rules");
a rule of the server's rules file is changed by editing the file, never here (409)."""

from __future__ import annotations

import json
import math
import time
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Body, HTTPException, Path, Request
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from aieval.online import RuleOrigin, parse_rule, rule_to_json
from aieval.server._responses import SafeJSONResponse
from aieval.server._security import REVIEWER, UPLOADER
from aieval.store import Store, StoredRule

__all__ = ["BackfillRequest", "online_api"]

online_api = APIRouter(prefix="/api/online")

_RuleName = Annotated[str, Path(min_length=1, max_length=100)]


#: How far past the server's clock a backfill's ``until`` may lie (another machine's clock).
UNTIL_SKEW_S = 300.0
#: An omitted ``until`` is now rounded up to this step, so a request sent again within it
#: names the same range (and is one backfill).
UNTIL_STEP_S = 60.0


class BackfillRequest(BaseModel):
    """Score the rule's matched traces received in [since, until) (epoch seconds or ISO 8601
    times), and put back its ``budget_exhausted`` and ``error`` items of that range."""

    model_config = ConfigDict(extra="forbid")

    since: AwareDatetime | float = Field(description="start (epoch seconds, or ISO 8601 with zone)")
    until: AwareDatetime | float | None = Field(
        None, description="end, excluded (default: now, rounded up to the minute)"
    )

    @field_validator("since", "until", mode="before")
    @classmethod
    def _not_a_bool(cls, value: object) -> object:
        # JSON true is not a time (pydantic would read it as 1.0)
        if isinstance(value, bool):
            raise ValueError("a time is epoch seconds or ISO 8601 with a zone, not true/false")
        return value

    @model_validator(mode="after")
    def _ordered(self) -> BackfillRequest:
        since, until = self.range()
        latest = time.time() + UNTIL_SKEW_S
        if not (math.isfinite(since) and math.isfinite(until)) or since < 0:
            raise ValueError("since and until must be finite times after 1970-01-01")
        if until > latest:
            raise ValueError(
                f"until ({_iso(until)}) lies in the future; at most {_iso(latest)} (now and "
                f"{UNTIL_SKEW_S:.0f} s): no trace has been received after now"
            )
        if since >= until:
            raise ValueError(f"since ({_iso(since)}) must come before until ({_iso(until)})")
        return self

    def range(self) -> tuple[float, float]:
        """``(since, until)`` in epoch seconds to the millisecond; an omitted ``until`` is now
        rounded up to the minute."""
        if self.until is None:
            return _ms(_epoch(self.since)), math.ceil(time.time() / UNTIL_STEP_S) * UNTIL_STEP_S
        return _ms(_epoch(self.since)), _ms(_epoch(self.until))


def _ms(epoch: float) -> float:
    """``epoch`` rounded to the millisecond: the range is kept, and shown, as it is asked to
    the millisecond, so two ranges shown alike are one backfill."""
    return round(epoch, 3) if math.isfinite(epoch) else epoch


def _epoch(value: datetime | float) -> float:
    return value.timestamp() if isinstance(value, datetime) else float(value)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _iso(epoch: float) -> str:
    """``epoch`` as ISO 8601 UTC to the millisecond, also past year 9999 (``+33658-...``: a
    time too far for :mod:`datetime`, as a mistyped ``until`` may be)."""
    millis = round(epoch * 1000)  # whole milliseconds: a float's .123 may be .12299999
    try:
        moment = _EPOCH + timedelta(milliseconds=millis)
        return moment.isoformat(timespec="milliseconds")
    except OverflowError:
        pass
    days, rest = divmod(millis, 86_400_000)
    year, month, day = _civil(days)
    seconds, ms = divmod(rest, 1000)
    clock = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{ms:03d}"
    return f"{year:+05d}-{month:02d}-{day:02d}T{clock}+00:00"


def _civil(days: int) -> tuple[int, int, int]:
    """The proleptic Gregorian (year, month, day) ``days`` after 1970-01-01, any year (H.
    Hinnant's days-to-civil)."""
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def _owner(request: Request) -> None:
    """Refuse a write by anyone but the server's owner."""
    if request.app.state.settings.token is None:
        raise HTTPException(
            403,
            "online rules run judges with this server's keys: a server without a token takes "
            "no rule changes over its API; start it with --token (or give the rules in "
            "aieval serve --online FILE)",
        )
    for key, kind in ((UPLOADER, "an upload token"), (REVIEWER, "a review token")):
        if isinstance(request.scope.get(key), str):  # the middleware refuses them first
            raise HTTPException(403, f"{kind} may not change online rules")


def _store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


def _rule_body(row: StoredRule) -> dict[str, Any]:
    spec = json.loads(row.spec)
    spec["paused"] = row.paused
    return {
        "name": row.name,
        "source": row.source,
        "paused": row.paused,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "rule": spec,
    }


def _found(store: Store, name: str) -> StoredRule:
    row = store.online_rule(name)
    if row is None:
        raise HTTPException(
            404, f"no online rule named {name!r} (GET /api/online/rules lists them)"
        )
    return row


@online_api.get("/rules")
def list_rules(request: Request) -> SafeJSONResponse:
    """Every online rule, by name: its source (``file`` or ``api``), state and spec."""
    return SafeJSONResponse({"rules": [_rule_body(r) for r in _store(request).online_rules()]})


@online_api.post("/rules", status_code=201)
def save_rule(
    request: Request, body: Annotated[dict[str, Any], Body(description="one rule")]
) -> SafeJSONResponse:
    """Add a rule, or replace the API's rule of that name (422 naming the field of a bad
    rule; 409 for the name of a rules-file rule)."""
    _owner(request)
    roots = tuple(request.app.state.settings.dataset_roots)
    rule = parse_rule(body, RuleOrigin("api", "request body", roots=roots))
    store = _store(request)
    existed = store.online_rule(rule.name) is not None
    if not store.save_online_rule(rule.name, rule_to_json(rule), source="api", paused=rule.paused):
        raise HTTPException(
            409,
            f"rule {rule.name!r} comes from the server's rules file: edit that file and restart "
            "the server (aieval serve --online FILE) to change it",
        )
    row = _found(store, rule.name)
    return SafeJSONResponse({**_rule_body(row), "replaced": existed}, status_code=201)


@online_api.post("/rules/{name}/pause")
def pause_rule(name: _RuleName, request: Request) -> SafeJSONResponse:
    """Pause a rule: it matches no new trace and its pending work waits."""
    return _set_paused(request, name, True)


@online_api.post("/rules/{name}/resume")
def resume_rule(name: _RuleName, request: Request) -> SafeJSONResponse:
    """Resume a paused rule."""
    return _set_paused(request, name, False)


def _set_paused(request: Request, name: str, paused: bool) -> SafeJSONResponse:
    _owner(request)
    store = _store(request)
    if not store.pause_online_rule(name, paused):
        _found(store, name)
    return SafeJSONResponse(_rule_body(_found(store, name)))


@online_api.delete("/rules/{name}")
def delete_rule(name: _RuleName, request: Request) -> SafeJSONResponse:
    """Delete an API rule (its windows' runs stay); a rules-file rule is refused (409)."""
    _owner(request)
    store = _store(request)
    row = _found(store, name)
    if row.source == "file":
        raise HTTPException(
            409,
            f"rule {name!r} comes from the server's rules file: remove it from that file and "
            "restart the server to delete it (or pause it here)",
        )
    store.delete_online_rule(name)
    return SafeJSONResponse({"deleted": name})


@online_api.post("/rules/{name}/backfill", status_code=202)
def backfill_rule(name: _RuleName, body: BackfillRequest, request: Request) -> SafeJSONResponse:
    """Ask for a backfill of the rule over [since, until); the server's online workers do it
    (202). The same range asked twice is done once (an omitted ``until`` is now rounded up
    to the minute: asked again within it, the same range); the answer says the range."""
    _owner(request)
    store = _store(request)
    _found(store, name)
    since, until = body.range()
    new = store.request_online_backfill(name, since, until)
    online = getattr(request.app.state, "online", None)
    if new and online is not None:
        online.wake()  # begin now, not at the next poll
    answer = {
        "rule": name,
        "since": since,
        "until": until,
        "range": f"[{_iso(since)}, {_iso(until)})",
        "requested": new,
    }
    return SafeJSONResponse(answer, status_code=202)
