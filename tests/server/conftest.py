"""Fixtures for server tests: an app over a temporary store, in-process and live clients, and
the viewer tests' Chromium (``browser``) with a watched ``page``."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from tests.support.browser import (  # noqa: F401 (the viewer tests' fixtures)
    _chromium,
    browser,
    page,
    page_watch,
)
from tests.support.server import EXAMPLES, LiveServer

from aieval.server import ServerSettings, create_app

AppFactory = Callable[..., FastAPI]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A dataset root holding a copy of the workflow examples."""
    folder = tmp_path / "root"
    shutil.copytree(EXAMPLES, folder / "workflows")
    return folder


@pytest.fixture
def server_store(tmp_path: Path) -> str:
    """The store the apps serve: an SQLite file in ``tmp_path`` (a module may override this
    fixture to run its tests on both backends)."""
    return str(tmp_path / "runs.db")


@pytest.fixture
def make_app(server_store: str, root: Path) -> Iterator[AppFactory]:
    """Build apps over one store; settings default to loopback, fast pings."""
    apps: list[FastAPI] = []

    def build(**settings: Any) -> FastAPI:
        settings.setdefault("dataset_roots", (root,))
        settings.setdefault("keepalive_s", 0.2)
        app = create_app(server_store, ServerSettings(**settings))
        apps.append(app)
        return app

    yield build
    for app in apps:
        app.state.manager.shutdown()


@pytest.fixture
async def client(make_app: AppFactory) -> AsyncIterator[httpx.AsyncClient]:
    """An in-process client (ASGI transport) for a default app."""
    app = make_app()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as c:
        yield c


@pytest.fixture
def live(make_app: AppFactory) -> Iterator[LiveServer]:
    """A default app served by a real uvicorn on 127.0.0.1."""
    with LiveServer(make_app()) as server:
        yield server
