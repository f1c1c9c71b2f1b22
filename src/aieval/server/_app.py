"""``create_app``: the FastAPI application serving the API, the event streams and the viewer."""

from __future__ import annotations

import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

from aieval.online import OnlineService
from aieval.server._errors import install_error_handlers
from aieval.server._judges_api import judges_api
from aieval.server._manager import RunManager
from aieval.server._online_api import online_api
from aieval.server._online_status import online_status_api
from aieval.server._redact import Redactor, redact_logs
from aieval.server._reports import BundleCache
from aieval.server._responses import SafeJSONResponse
from aieval.server._review_api import review_api
from aieval.server._routes import router
from aieval.server._security import SecurityMiddleware
from aieval.server._settings import ServerSettings
from aieval.server._table import SampleIndex
from aieval.server._traces import (
    MAX_CONCURRENT_GRADINGS,
    MAX_CONCURRENT_INTAKES,
    MAX_INTAKE_BYTES,
    IntakeBytes,
    intake,
    trace_store,
    traces_api,
)
from aieval.server._uploads import Uploads, uploads_api
from aieval.server._views import sample_item
from aieval.server._wakeups import Wakeups
from aieval.store import Store, StoreLocation, TableQueries

__all__ = ["create_app"]

STATIC_DIR = Path(__file__).parent / "static"

_PLACEHOLDER = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>aieval</title></head><body><h1>aieval server</h1>
<p>The web viewer is not installed in this build.
The API is described at <a href="/openapi.json">/openapi.json</a>.</p>
</body></html>"""


def create_app(
    store: Store | StoreLocation | str | os.PathLike[str],
    settings: ServerSettings | None = None,
) -> FastAPI:
    """The evaluation server for one run store.

    Args:
        store: the run store (or its location: an SQLite path or a ``postgresql://`` URL) that
            runs are written to and read from.
        settings: host, token, roots, limits; loopback without a token by default.

    Raises:
        ConfigError: settings that would expose the server without a token.
        StoreError: the store cannot be opened, or an earlier aieval's trace file beside it
            (or at ``$AIEVAL_TRACES_DB``) cannot be read into it.

    Example:
        >>> import tempfile, os
        >>> app = create_app(os.path.join(tempfile.mkdtemp(), "runs.db"))
        >>> sorted(app.openapi()["paths"])[:3]
        ['/api/compare', '/api/compare/sample', '/api/compare/samples/{sample_id}']
    """
    settings = settings or ServerSettings()
    settings.check()
    reader = store if isinstance(store, Store) else Store(store)
    try:  # the received traces, with an earlier aieval's trace file copied in (once)
        received = trace_store(reader.location)
    except BaseException:
        if reader is not store:
            reader.close()
        raise
    wakeups = Wakeups()
    manager = RunManager(
        reader.location,
        wakeups,
        max_concurrent=settings.max_concurrent_runs,
        roots=settings.dataset_roots,
    )

    uploads = Uploads()
    # online scoring of the received traces: idle until the store holds an active rule
    online = OnlineService(reader.location, roots=settings.dataset_roots)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if settings.online_scoring:
            online.start()
        yield
        online.stop()
        manager.shutdown()
        uploads.close()

    app = FastAPI(
        title="aieval",
        summary="Start evaluations, follow them live, read reports and comparisons.",
        lifespan=lifespan,
        # the interactive docs pages load their scripts from a CDN: no use offline, and
        # against the viewer's CSP; the schema itself stays at /openapi.json
        docs_url=None,
        redoc_url=None,
        # stored text may hold lone surrogates: sent as JSON escapes, never a failed answer
        default_response_class=SafeJSONResponse,
    )
    app.state.settings = settings
    app.state.store = reader
    app.state.manager = manager
    app.state.wakeups = wakeups
    app.state.sample_index = SampleIndex(sample_item)
    # PostgreSQL answers the sample table itself; an SQLite file is indexed in this process
    location = reader.location
    app.state.table_queries = None if location.is_sqlite else TableQueries(location)
    app.state.bundles = BundleCache()
    app.state.uploads = uploads
    app.state.online = online
    secrets = [settings.token, *settings.upload_tokens.values(), *settings.review_tokens.values()]
    app.state.redactor = Redactor(secrets, roots=settings.dataset_roots)
    redact_logs(app.state.redactor)
    install_error_handlers(app)
    app.include_router(uploads_api)
    app.include_router(review_api)
    app.include_router(judges_api)
    app.include_router(online_status_api)
    app.include_router(online_api)
    app.include_router(router)
    app.state.trace_store = received
    app.state.trace_gradings = threading.BoundedSemaphore(MAX_CONCURRENT_GRADINGS)
    app.state.trace_intakes = threading.BoundedSemaphore(MAX_CONCURRENT_INTAKES)
    app.state.trace_bytes = IntakeBytes(MAX_INTAKE_BYTES)
    app.include_router(intake)
    app.include_router(traces_api)
    _mount_viewer(app)
    app.add_middleware(
        SecurityMiddleware,
        allowed_hosts=settings.host_allowlist(),
        token=settings.token,
        upload_tokens=settings.upload_tokens,
        review_tokens=settings.review_tokens,
    )
    return app


def _mount_viewer(app: FastAPI) -> None:
    @app.get("/", include_in_schema=False)
    def index() -> Response:
        page = STATIC_DIR / "index.html"
        return FileResponse(page) if page.is_file() else HTMLResponse(_PLACEHOLDER)

    if STATIC_DIR.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
