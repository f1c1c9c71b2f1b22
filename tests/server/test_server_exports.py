"""The public names of aieval.server, and the doctests of its modules."""

from __future__ import annotations

import doctest
import importlib

import pytest

import aieval.server

MODULES = [
    "aieval._secrets",
    "aieval.providers._http",
    "aieval.server._app",
    "aieval.server._diff",
    "aieval.server._errors",
    "aieval.server._redact",
    "aieval.server._responses",
    "aieval.server._settings",
    "aieval.server._table",
    "aieval.server._views",
    "aieval.workflows._runner",
]


def test_public_names() -> None:
    assert aieval.server.__all__ == sorted(aieval.server.__all__)
    assert aieval.server.__all__ == ["ServerSettings", "create_app"]


def test_import_aieval_does_not_need_the_server() -> None:
    import subprocess
    import sys

    code = "import sys, aieval, aieval.cli; print('fastapi' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", [pytest.param(m, id=m) for m in MODULES])
def test_doctests(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
