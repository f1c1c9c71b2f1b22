"""Every error answers ``{"message", "reasons": [...]}``; 422s also carry ``missing_inputs``.

A store that cannot be reached (database down, connection lost, file locked) or that fails
(its read connections all busy past their wait, a write refused) is a 503 with ``Retry-After``,
naming the store and the reason; any other failure is a 500 whose details stay in the server
log."""

from __future__ import annotations

import logging
import sqlite3
import sys
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException

from aieval.errors import (
    AievalError,
    IncompatibleDatasetError,
    RunNotFoundError,
    StoreError,
    UnstorableSampleError,
    UserError,
)
from aieval.server._responses import SafeJSONResponse
from aieval.store import StoreLocation

__all__ = ["STORE_RETRY_AFTER_S", "error_body", "install_error_handlers", "validation_reasons"]

log = logging.getLogger("aieval.server")

#: Seconds a client is asked to wait (``Retry-After``) when the run store is unreachable.
STORE_RETRY_AFTER_S = 5


def error_body(message: str, reasons: Sequence[str] = (), **more: Any) -> dict[str, Any]:
    """The one error shape."""
    return {"message": message, "reasons": list(reasons), **more}


def validation_reasons(errors: Sequence[Any]) -> list[str]:
    """One reason per pydantic error, naming the field path (``settings.concurrency: ...``).

    >>> validation_reasons([{"loc": ("body", "settings", "retries"), "msg": "too big"}])
    ['settings.retries: too big']
    """
    reasons = []
    for err in errors:
        loc = [str(p) for p in err.get("loc", ())]
        body = bool(loc) and loc[0] == "body"
        if body:
            loc = loc[1:]
        msg = err.get("msg", "invalid")
        if body and err.get("type") == "extra_forbidden" and loc:
            msg = _unknown_body_key(loc)
        reasons.append(f"{'.'.join(loc) or '(body)'}: {msg}")
    return reasons


def _unknown_body_key(loc: list[str]) -> str:
    """``unknown key; did you mean ...?`` for a key of the evaluation body (the one POST body)."""
    from aieval._keys import known_fields, unknown_key
    from aieval.runner import EvalConfig

    return unknown_key(loc[-1], known_fields(EvalConfig, loc[:-1]))


def install_error_handlers(app: FastAPI) -> None:
    """Map validation errors, user errors, unknown runs and HTTP errors to the one shape."""
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RunNotFoundError, _not_found)
    app.add_exception_handler(IncompatibleDatasetError, _incompatible)
    app.add_exception_handler(UserError, _user_error)
    app.add_exception_handler(AievalError, _server_error)
    app.add_exception_handler(Exception, _server_error)


def _reply(request: Request, status: int, body: dict[str, Any], **kw: Any) -> SafeJSONResponse:
    redact = request.app.state.redactor.redact
    return SafeJSONResponse(redact(body), status_code=status, **kw)


async def _invalid_request(request: Request, exc: Exception) -> SafeJSONResponse:
    assert isinstance(exc, RequestValidationError)
    reasons = validation_reasons(exc.errors())
    message = f"invalid request: {len(reasons)} problem(s): " + "; ".join(reasons)
    return _reply(request, 422, error_body(message, reasons, missing_inputs=[]))


async def _http_error(request: Request, exc: Exception) -> SafeJSONResponse:
    assert isinstance(exc, HTTPException)
    return _reply(
        request, exc.status_code, error_body(str(exc.detail)), headers=dict(exc.headers or {})
    )


async def _not_found(request: Request, exc: Exception) -> SafeJSONResponse:
    return _reply(request, 404, error_body(str(exc)))


async def _incompatible(request: Request, exc: Exception) -> SafeJSONResponse:
    assert isinstance(exc, IncompatibleDatasetError)
    reasons = [
        f"missing input {name!r} in rows {', '.join(ids[:5])}" for name, ids in exc.rows.items()
    ]
    return _reply(request, 422, error_body(str(exc), reasons, missing_inputs=exc.missing_inputs))


async def _user_error(request: Request, exc: Exception) -> SafeJSONResponse:
    return _reply(request, 422, error_body(str(exc), [str(exc)], missing_inputs=[]))


async def _server_error(request: Request, exc: Exception) -> SafeJSONResponse:
    cause = _unreachable(exc)
    if cause is not None:
        return _store_unavailable(request, cause)
    if isinstance(exc, StoreError) and not isinstance(exc, UnstorableSampleError):
        # one line, its store named redacted (a role that may not write, the read connections
        # busy): the server works, its store does not, so a client may retry later
        log.warning("run store failed on %s: %s", request.url.path, exc)
        said = f"the store failed: {_shown(request, exc)}; try again in {STORE_RETRY_AFTER_S} s"
        return _reply(
            request, 503, error_body(said), headers={"Retry-After": str(STORE_RETRY_AFTER_S)}
        )
    log.exception("server error on %s", request.url.path, exc_info=exc)
    # details (paths, values) stay in the server log
    return _reply(
        request, 500, error_body(f"internal error ({type(exc).__name__}); see the server log")
    )


def _shown(request: Request, exc: BaseException) -> str:
    """``exc``'s message with the store named as clients see it: an SQLite file by its name
    (the server's folders are its own), a database URL without its password."""
    location: StoreLocation = request.app.state.store.location
    text = location.scrub(str(exc))
    if location.path is not None:
        text = text.replace(str(location.path), location.path.name)
    return text


def _unreachable(exc: BaseException) -> BaseException | None:
    """The database driver's error behind ``exc`` when it says the store cannot be reached
    or used now (connection refused or lost, server shut down, file locked or unopenable):
    an ``OperationalError`` of sqlite3 or psycopg anywhere in its chain; else None."""
    kinds: list[type[BaseException]] = [sqlite3.OperationalError]
    psycopg = sys.modules.get("psycopg")  # loaded by a PostgreSQL store, never for SQLite
    if psycopg is not None:
        kinds.append(psycopg.OperationalError)
    seen: set[int] = set()
    found: BaseException | None = exc
    while found is not None and id(found) not in seen:
        if isinstance(found, tuple(kinds)):
            return found
        seen.add(id(found))
        context = None if found.__suppress_context__ else found.__context__
        found = found.__cause__ or context
    return None


def _store_unavailable(request: Request, cause: BaseException) -> SafeJSONResponse:
    """503 naming the store (its password masked, an SQLite file by name) and the driver's
    reason, with ``Retry-After``; the reason is logged as a warning (no traceback)."""
    location: StoreLocation = request.app.state.store.location
    shown = str(location) if location.path is None else location.path.name
    reason = location.scrub(str(cause).strip().splitlines()[0] if str(cause).strip() else "")
    log.warning("run store unavailable on %s: %s", request.url.path, reason)
    message = (
        f"the run store ({shown}) is unavailable: {reason or type(cause).__name__}; "
        f"try again in {STORE_RETRY_AFTER_S} s"
    )
    return _reply(
        request,
        503,
        error_body(message, [reason] if reason else []),
        headers={"Retry-After": str(STORE_RETRY_AFTER_S)},
    )
