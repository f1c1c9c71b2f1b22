"""Run a coroutine to completion from sync code, even inside a running event loop; and the
sync/async twins of a function, written once with one signature."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["blocking_twin", "run_sync", "thread_twin"]

T = TypeVar("T")
P = ParamSpec("P")


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


def blocking_twin(
    fn: Callable[P, Coroutine[Any, Any, T]], *, name: str, doc: str, thread_name: str = "aieval"
) -> Callable[P, T]:
    """The blocking twin of coroutine function ``fn``: its parameters, run by :func:`run_sync`."""

    @functools.wraps(fn)
    def twin(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(fn(*args, **kwargs), thread_name=thread_name)

    twin.__name__ = twin.__qualname__ = name
    twin.__doc__ = doc
    return twin


def thread_twin(fn: Callable[P, T], *, name: str, doc: str) -> Callable[P, Coroutine[Any, Any, T]]:
    """The async twin of the blocking ``fn``: its parameters, run in a worker thread."""

    @functools.wraps(fn)
    async def twin(*args: P.args, **kwargs: P.kwargs) -> T:
        return await asyncio.to_thread(fn, *args, **kwargs)

    twin.__name__ = twin.__qualname__ = name
    twin.__doc__ = doc
    return twin
