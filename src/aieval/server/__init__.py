"""The evaluation server: start evaluations over HTTP, follow them live, read their reports.

Needs the ``server`` extra (``pip install 'aieval[server]'``).

Example::

    import uvicorn
    from aieval.server import ServerSettings, create_app

    uvicorn.run(create_app("aieval.db", ServerSettings()), host="127.0.0.1", port=8765)
"""

from __future__ import annotations

try:
    import fastapi  # noqa: F401
    import sse_starlette  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the aieval server needs FastAPI and sse-starlette: pip install 'aieval[server]'"
    ) from exc

from aieval.server._app import create_app
from aieval.server._settings import ServerSettings

__all__ = ["ServerSettings", "create_app"]
