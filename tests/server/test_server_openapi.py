"""Property-based requests generated from /openapi.json never get a 5xx."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from aieval.errors import UserError
from aieval.server import ServerSettings, create_app

_folder = tempfile.TemporaryDirectory(prefix="aieval-openapi-")
_root = Path(_folder.name)
# schemathesis's ASGI client sends Host: testserver
_app = create_app(
    _root / "runs.db", ServerSettings(dataset_roots=(_root,), allowed_hosts=("testserver",))
)
schema = schemathesis.openapi.from_asgi("/openapi.json", _app)


@pytest.fixture(scope="module", autouse=True)
def _cleanup() -> Iterator[None]:
    yield
    _app.state.manager.shutdown()
    _folder.cleanup()


@schema.parametrize()
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_server_errors(case: Any) -> None:
    response = case.call()
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        body = response.json()
        assert isinstance(body["message"], str) and isinstance(body["reasons"], list)


def test_every_operation_is_documented(make_app: Any) -> None:
    app = make_app()
    paths = app.openapi()["paths"]
    assert {
        "/api/evaluations", "/api/runs", "/api/runs/{run_id}", "/api/runs/{run_id}/samples",
        "/api/runs/{run_id}/samples/{sample_id}", "/api/compare", "/api/runs/{run_id}/events",
    } <= set(paths)  # fmt: skip
    body = paths["/api/evaluations"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["$ref"].endswith("EvaluationRequest")
    assert issubclass(UserError, Exception)
