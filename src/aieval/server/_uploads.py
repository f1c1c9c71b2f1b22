"""Run uploads (``aieval push --to URL``): what the store holds of a run, and the upload itself.

``GET /api/runs/import/holding?run_id=`` answers the run's header, sample ids and each
sample's digest (``run`` is null when absent), so a client sends only what is missing and sees
samples that differ from its own. ``POST /api/runs/import`` takes the
parts of an upload (validated field by field, each part's body kept in a spool folder, one file
per part: a part sent again replaces itself) and then the commit, which writes the header and
every part's samples to the store in one transaction (samples already stored are kept as they
are) and answers ``{"run_id", "outcome", "samples_added"}``. A commit sent again answers the same.
The holding answer's ``held`` (a digest of the run's header and sample ids here) comes back in
the commit: if the run changed here in between (resumed, written by another push), the commit is
refused with 409 and nothing is written.

Uploads need the server's token or an upload token: a server started without a token refuses
them (403), since an upload adds to the history that comparisons and promotion decisions read.
An upload token pushes only run ids of aieval's shape (``YYYYMMDD-HHMMSS-`` and 8 hex
digits, else 422 naming the field: such an id never equals nor starts like a name that starts
with a letter); it may read and write only the runs it created (recorded on the run), else the
same 403 for another token's run and the server's, naming only the id given; and it adds runs
only to names that hold its own runs or none (403 naming the name). No upload rewrites what a
stored run is, nor a completed run's header (409 naming the fields: see
:meth:`aieval.store.Store.import_run`).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from aieval._json import duplicate_key_path
from aieval.errors import ConfigError, PushError
from aieval.push import (
    MAX_JSON_DEPTH,
    MAX_JSON_ITEMS,
    ImportRequest,
    check_json_value,
    json_items,
    run_in,
)
from aieval.server._errors import error_body, validation_reasons
from aieval.server._responses import SafeJSONResponse
from aieval.server._security import UPLOADER
from aieval.server._window_names import window_name_refusal
from aieval.store import (
    RUN_ID_SHAPE,
    Checked,
    ImportOutcome,
    Store,
    StoredCall,
    StoredSample,
    StoredScore,
    StoreLocation,
    holding_digest,
    is_run_id,
    not_yours_message,
)

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_BUSY",
    "MAX_OPEN",
    "MAX_OPEN_PER_TOKEN",
    "MAX_SPOOL_BYTES",
    "MAX_SPOOL_BYTES_PER_TOKEN",
    "Uploads",
    "uploads_api",
]

#: The largest request body an upload part may have.
MAX_BODY_BYTES = 32 * 1024 * 1024
#: Uploads open at once, all tokens together (more get 429 until one commits or expires).
MAX_OPEN = 64
#: Uploads one token (an upload token, or the server's own) may have open at once: one token
#: never holds every slot.
MAX_OPEN_PER_TOKEN = 8
#: Bytes the spool holds at most, all uploads together (more get 503 until one commits).
MAX_SPOOL_BYTES = 2 * 1024**3
#: Bytes one token's open uploads may hold in the spool at most (more get 429).
MAX_SPOOL_BYTES_PER_TOKEN = 512 * 1024**2
#: Upload requests (parts and commits) decoded or written at once; more get 503 and
#: Retry-After: each may take hundreds of MB while it is decoded.
MAX_BUSY = 4
#: The Retry-After (seconds) of a 503 while the server is busy with other uploads.
RETRY_AFTER_S = 5
#: An upload with no request for this long is dropped with its parts.
IDLE_S = 3600.0
_COMMITTED_KEPT = 1000

uploads_api = APIRouter(prefix="/api")


class Uploads:
    """The spool of uploads in progress (a temporary folder) and the last commits' answers."""

    def __init__(self) -> None:
        self._folder: Path | None = None
        self._lock = threading.Lock()
        self._active: dict[str, _Open] = {}
        self._committed: OrderedDict[str, ImportOutcome] = OrderedDict()
        self.busy = threading.BoundedSemaphore(MAX_BUSY)

    def put(self, upload: str, part: int, body: bytes, token: str) -> None:
        """Keep part ``part`` of ``upload``, its validated request ``body`` (replacing an earlier
        copy of it); ``token`` names whose upload it is (its limits are counted apart)."""
        with self._lock:
            self._expire()
            if upload in self._committed:
                raise ConfigError(f"upload: {upload} is already committed; start a new upload")
            held = self._active.get(upload)
            if held is None:
                mine = sum(1 for o in self._active.values() if o.token == token)
                if mine >= MAX_OPEN_PER_TOKEN:
                    raise _busy(
                        429,
                        f"this token has {MAX_OPEN_PER_TOKEN} uploads in progress (the most "
                        "one token may have); commit them, or retry after they expire",
                    )
                if len(self._active) >= MAX_OPEN:
                    raise _busy(429, f"{MAX_OPEN} uploads are in progress; retry later")
                held = self._active[upload] = _Open(token)
            growth = len(body) - held.parts.get(part, 0)
            total = sum(o.size for o in self._active.values())
            mine_bytes = sum(o.size for o in self._active.values() if o.token == token)
            if growth > 0 and mine_bytes + growth > MAX_SPOOL_BYTES_PER_TOKEN:
                raise _busy(
                    429,
                    f"this token's uploads in progress would hold more than "
                    f"{MAX_SPOOL_BYTES_PER_TOKEN} bytes; commit them first",
                )
            if growth > 0 and total + growth > MAX_SPOOL_BYTES:
                raise _busy(503, "the server's upload spool is full; retry later")
            held.parts[part] = len(body)
            held.seen = time.monotonic()
        folder = self.folder / upload
        folder.mkdir(exist_ok=True)
        spooled = folder / f".part-{part:07d}.tmp"
        spooled.write_bytes(body)
        spooled.replace(folder / f"part-{part:07d}.json")

    def commit(
        self, location: StoreLocation, request: ImportRequest, upload: str, uploader: str | None
    ) -> ImportOutcome:
        """Write the upload's run and samples to the store in one transaction (``upload``: its
        spool key; ``uploader``: the upload token's name, ``None`` for the server's token)."""
        assert request.run is not None and request.parts is not None
        with self._lock:
            done = self._committed.get(upload)
            if done is not None:
                return done
            held = self._active.pop(upload, None)
        folder = self.folder / upload
        have = {p.name for p in folder.glob("part-*.json")} if folder.is_dir() else set()
        wanted = {f"part-{k:07d}.json" for k in range(request.parts)}
        if have != wanted:
            missing = sorted(wanted - have)
            what = (
                f"part {int(missing[0][5:12])} of {request.parts} was never received"
                if missing
                else f"parts beyond {request.parts} were received"
            )
            with self._lock:
                if held is not None:
                    held.seen = time.monotonic()
                    self._active[upload] = held
            raise ConfigError(f"parts: {what}; send the upload's parts again, then commit")
        run = request.run.row()
        store = Store(location)  # a connection of its own: readers go on meanwhile
        try:
            checked = None if request.held is None else Checked.by_digest(request.held)
            outcome = store.import_run(
                run, _spooled(folder, request.parts), checked=checked, pushed_by=uploader
            )
        except PushError:  # refused for good (the run changed here): its parts are of no use
            shutil.rmtree(folder, ignore_errors=True)
            raise
        finally:
            store.close()
        shutil.rmtree(folder, ignore_errors=True)
        with self._lock:
            self._committed[upload] = outcome
            while len(self._committed) > _COMMITTED_KEPT:
                self._committed.popitem(last=False)
        return outcome

    @property
    def folder(self) -> Path:
        """The spool folder, made on first use."""
        with self._lock:
            if self._folder is None:
                self._folder = Path(tempfile.mkdtemp(prefix="aieval-uploads-"))
            return self._folder

    def close(self) -> None:
        """Remove the spool."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

    def _expire(self) -> None:
        now = time.monotonic()
        for upload, held in list(self._active.items()):
            if now - held.seen > IDLE_S:
                del self._active[upload]
                if self._folder is not None:
                    shutil.rmtree(self._folder / upload, ignore_errors=True)


class _Open:
    """An upload in progress: whose it is, when it was last sent to, its parts' sizes."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.seen = time.monotonic()
        self.parts: dict[int, int] = {}

    @property
    def size(self) -> int:
        return sum(self.parts.values())


def _busy(status: int, message: str) -> HTTPException:
    return HTTPException(status, message, headers={"Retry-After": str(RETRY_AFTER_S)})


def _spooled(folder: Path, parts: int) -> Iterator[StoredSample]:
    for k in range(parts):
        for data in json.loads((folder / f"part-{k:07d}.json").read_bytes())["samples"]:
            scores = tuple(StoredScore(**s) for s in data.pop("scores", ()))
            calls = tuple(StoredCall(**c) for c in data.pop("calls", ()))
            yield StoredSample(**data, scores=scores, calls=calls)


@uploads_api.get("/runs/import/holding")
def holding(request: Request, run_id: Annotated[str, Query(min_length=1)]) -> Response:
    """What the store holds of ``run_id`` (exact id): its header, sample ids and digests."""
    uploader = _uploads_allowed(request)
    if uploader is not None and not is_run_id(run_id):
        return _refuse(422, _not_an_id("run_id"))
    store: Store = request.app.state.store
    held = store.run_holding(run_id)
    if held is not None and uploader is not None and held.pushed_by != uploader:
        return _refuse(403, not_yours_message(run_id, uploader))
    body: dict[str, Any] = {"version": 1, "run": None, "sample_ids": [], "digests": {}}
    # echoed by the commit: the write is refused if the run changed here in between
    body["held"] = holding_digest(held)
    if held is not None:
        body = {
            "version": 1,
            "run": run_in(held.run),
            "sample_ids": sorted(held.sample_ids),
            "digests": held.digests,
            "held": body["held"],
        }
    # ASCII escapes: a lone surrogate in a stored text travels as \udcXX (UTF-8 cannot hold it)
    return Response(json.dumps(body, ensure_ascii=True), media_type="application/json")


@uploads_api.post("/runs/import")
async def upload(request: Request) -> SafeJSONResponse:
    """A part of an upload, or its commit (see the module's description)."""
    uploader = _uploads_allowed(request)
    uploads: Uploads = request.app.state.uploads
    # decoding a body may take hundreds of MB: a few at once, the rest asked to come back
    if not uploads.busy.acquire(blocking=False):
        raise _busy(503, f"{MAX_BUSY} uploads are being received; retry later")
    try:
        return await _upload(request, uploads, uploader)
    finally:
        uploads.busy.release()


async def _upload(request: Request, uploads: Uploads, uploader: str | None) -> SafeJSONResponse:
    raw = await _body(request)
    # up to 32 MB parsed and checked: off the event loop, so other requests go on meanwhile
    parsed = await run_in_threadpool(_parsed, raw)
    if isinstance(parsed, SafeJSONResponse):
        return parsed
    body, compact = parsed
    if uploader is not None and body.run is not None and not is_run_id(body.run.id):
        return _refuse(422, _not_an_id("run.id"))
    # the server's own token may move window runs between its stores; an upload token never
    refusal = (
        None
        if body.run is None or uploader is None
        else window_name_refusal(
            "run.name",
            body.run.name,
            "an upload token may not push them: push the run under "
            "another name, or with the server's own token",
        )
    )
    if refusal is not None:
        return _refuse(422, refusal)
    # each token's uploads apart: another token cannot add parts to it nor read its answer
    key = body.upload if uploader is None else f"{uploader}-{body.upload}"
    if body.part is not None:
        await run_in_threadpool(uploads.put, key, body.part, compact, uploader or "")
        answer = {"upload": body.upload, "part": body.part, "samples": len(body.samples)}
        return SafeJSONResponse(answer)
    store: Store = request.app.state.store
    try:
        outcome = await run_in_threadpool(uploads.commit, store.location, body, key, uploader)
    except PushError as exc:  # not this token's run, or it differs here: nothing written
        message = str(exc).replace(str(store.location), "this server's store")
        refused = error_body(message, [message], changed_since=exc.changed_since)
        return SafeJSONResponse(refused, status_code=403 if exc.forbidden else 409)
    request.app.state.bundles.forget(outcome.run_id)
    answer = {
        "run_id": outcome.run_id,
        "outcome": outcome.outcome,
        "samples_added": outcome.samples_added,
    }
    return SafeJSONResponse(answer)


def _parsed(raw: bytes) -> tuple[ImportRequest, bytes] | SafeJSONResponse:
    """The request ``raw`` validated field by field (and its compact JSON, what the spool
    keeps), or the answer refusing it."""
    items = json_items(raw, MAX_JSON_ITEMS)
    if items > MAX_JSON_ITEMS:  # counted before decoding: decoding is what takes the memory
        return _refuse(
            413,
            f"(body): {items} JSON objects and arrays; an upload request may hold "
            f"{MAX_JSON_ITEMS} at most: send fewer samples per part",
        )
    try:
        data = json.loads(raw)
    except RecursionError:
        where = _deep_path(raw, MAX_JSON_DEPTH)
        return _refuse(422, f"{where}: objects and arrays nest more than {MAX_JSON_DEPTH} levels")
    except ValueError as exc:
        return _refuse(400, f"the body is not JSON: {exc}")
    try:  # NaN, Infinity and 1e400 decode to non-finite floats: refused naming the field
        check_json_value(data, "")
    except ValueError as exc:
        return _refuse(422, str(exc))
    path = duplicate_key_path(raw)
    if path is not None:
        return _refuse(422, f"{path}: duplicate key; give each key once")
    if not isinstance(data, dict):
        return _refuse(422, "(body): a JSON object is expected")
    try:
        request = ImportRequest.model_validate(data)
    except ValidationError as exc:
        reasons = validation_reasons(exc.errors())
        message = f"invalid upload: {len(reasons)} problem(s): " + "; ".join(reasons[:5])
        return SafeJSONResponse(error_body(message, reasons), status_code=422)
    # kept compact: whitespace sent around the values takes no room in the spool
    return request, json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode()


#: A JSON string (a key when a colon follows), a bracket or a comma: what :func:`_deep_path`
#: follows.
_TOKENS = re.compile(rb'"((?:[^"\\]|\\.)*)"\s*(:?)|[\[\]{},]')


def _deep_path(raw: bytes, limit: int) -> str:
    """The path (``run.config.x``, its first levels) to where ``raw`` nests more than ``limit``
    deep: the decoder gives up there without saying where."""
    stack: list[list[Any]] = []  # per open object or array: [is_array, label, index]
    key = ""
    for match in _TOKENS.finditer(raw):
        token = match.group()
        if match.group(2):  # a key
            key = match.group(1).decode("utf-8", "replace")
        elif token in (b"{", b"["):
            if len(stack) > limit:
                break
            label = "" if not stack else str(stack[-1][2]) if stack[-1][0] else key
            stack.append([token == b"[", label, 0])
        elif token == b"," and stack and stack[-1][0]:
            stack[-1][2] += 1
        elif token in (b"}", b"]") and stack:
            stack.pop()
    return ".".join(frame[1] for frame in stack[1:5]) or "(body)"


def _uploads_allowed(request: Request) -> str | None:
    """The upload token's name the request came with (``None``: the server's own token).

    Raises:
        HTTPException: 403, the server has no token.
    """
    if request.app.state.settings.token is None:
        raise HTTPException(
            403,
            "this server takes uploads only with a token: start it with --token or "
            "AIEVAL_TOKEN, and push with the same token",
        )
    uploader = request.scope.get(UPLOADER)
    return uploader if isinstance(uploader, str) else None


def _not_an_id(field: str) -> str:
    # an id of another shape could equal, or start like, a name or another run's id
    return (
        f"{field}: an upload token pushes only runs whose id has aieval's shape, {RUN_ID_SHAPE};"
        " push a run given an id of its own with the server's own token"
    )


async def _body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise HTTPException(413, f"an upload request may hold {MAX_BODY_BYTES} bytes at most")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise HTTPException(413, f"an upload request may hold {MAX_BODY_BYTES} bytes at most")
        chunks.append(chunk)
    return b"".join(chunks)


def _refuse(status: int, message: str) -> SafeJSONResponse:
    return SafeJSONResponse(error_body(message, [message]), status_code=status)
