"""Run a coroutine to completion from sync code, even inside a running event loop."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T], *, thread_name: str = "aieval") -> T:
    """``asyncio.run(coro)``; inside a running loop (a notebook) on a helper thread instead.

    Either way the call blocks until the coroutine is done and re-raises its exception.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def worker() -> None:
        try:
            box["result"] = asyncio.run(coro)
        except BaseException as exc:
            box["error"] = exc

    # the helper thread sees the caller's context (a server's file confinement, say)
    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(worker,), name=thread_name)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    result: T = box["result"]
    return result
