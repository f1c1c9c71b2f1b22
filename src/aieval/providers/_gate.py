"""The call gate: a spend limit every model call passes before it is sent.

When a gate is set in the current context (:func:`using_gate`; online scoring sets one per
worker, docs/online.md "Budgets"), every attempt a :class:`ResilientProvider` sends, and every
embeddings request, first :meth:`CallGate.reserve`s the call (blocking store I/O, run off the
event loop) and, once it ended, :meth:`CallGate.settle`s it with the tokens and cost the
response reported (nothing on a failure). A refused reservation raises
:class:`~aieval.errors.BudgetExhausted` and the call is never sent. A cache hit never reaches
the gate: it spends nothing.

A gate has at most ONE call in flight, across event loops and threads: a judge sampling N times
sends its calls one after another under it. Gates with the same ``flight`` attribute (any
object that can be weakly referenced; a worker's) share that one call in flight.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from aieval.providers._base import ChatRequest, ChatResponse, Provider

__all__ = ["CallGate", "chat_usage", "current_gate", "gated", "sent", "using_gate"]

T = TypeVar("T")

_gate: ContextVar[CallGate | None] = ContextVar("aieval_call_gate", default=None)
# set while a gated call runs: a provider inside it (a hand-built wrapper around a wrapper)
# sends that same call, already reserved, so it passes straight through
_passing: ContextVar[bool] = ContextVar("aieval_call_gate_passing", default=False)


@runtime_checkable
class CallGate(Protocol):
    """What a model call asks before it is sent, and tells once it ended."""

    def reserve(self) -> object:
        """Reserve one call (blocking; called off the event loop) and answer a ticket for
        :meth:`settle`.

        Raises:
            BudgetExhausted: the call may not start; it is not sent.
        """
        ...

    def settle(self, ticket: object, tokens: int | None, cost: float | None) -> None:
        """The reserved call ended: it used ``tokens`` and cost ``cost`` (``None``: unknown, or
        the call failed). Called exactly once per ticket, also when the call was cancelled."""
        ...


def current_gate() -> CallGate | None:
    """The gate set in the current context, if any."""
    return _gate.get()


@contextmanager
def using_gate(gate: CallGate | None) -> Iterator[None]:
    """Pass every model call made in this context (and the tasks and threads it starts, which
    copy the context) through ``gate``; ``None`` lifts any gate for the block."""
    token = _gate.set(gate)
    try:
        yield
    finally:
        _gate.reset(token)


async def gated(
    call: Callable[[], Awaitable[T]], usage: Callable[[T], tuple[int | None, float | None]]
) -> T:
    """``await call()`` under the current gate (directly when none is set): wait for the
    gate's turn, reserve, call, then settle with ``usage(result)`` (``(tokens, cost)``)."""
    gate = _gate.get()
    if gate is None or _passing.get():
        return await call()
    turn = _turn(gate)
    await turn.acquire()
    try:
        ticket = await _reserved(gate)
        tokens: int | None = None
        cost: float | None = None
        passing = _passing.set(True)
        try:
            result = await call()
            tokens, cost = usage(result)
            return result
        finally:
            _passing.reset(passing)
            # shielded: the spend is recorded even when the call was cancelled
            await asyncio.shield(asyncio.to_thread(gate.settle, ticket, tokens, cost))
    finally:
        turn.release()


def chat_usage(response: ChatResponse) -> tuple[int | None, float | None]:
    """``(tokens, cost)`` of one answered chat call: the reported tokens (input plus output;
    ``None`` when neither was reported) and the reported cost (``usage.cost``; ``None`` when
    the provider reports none)."""
    counts = [n for n in (response.input_tokens, response.output_tokens) if n is not None]
    return (sum(counts) if counts else None), response.cost


async def sent(inner: Provider, request: ChatRequest) -> ChatResponse:
    """``inner.generate(request)`` under the current gate, unless ``inner`` passes its calls
    through the gate itself (``gates_calls``: a :class:`ResilientProvider`, per attempt)."""
    if getattr(inner, "gates_calls", False):
        return await inner.generate(request)
    return await gated(lambda: inner.generate(request), chat_usage)


async def _reserved(gate: CallGate) -> object:
    """``gate.reserve()`` off the loop; a reservation made after its caller was cancelled is
    settled at once (nothing sent), so it never stays in flight."""
    pending = asyncio.ensure_future(asyncio.to_thread(gate.reserve))
    try:
        return await asyncio.shield(pending)
    except asyncio.CancelledError:
        pending.add_done_callback(lambda done: _release_late(gate, done))
        raise


def _release_late(gate: CallGate, done: asyncio.Future[object]) -> None:
    if not done.cancelled() and done.exception() is None:
        threading.Thread(target=gate.settle, args=(done.result(), None, None)).start()


class _Turn:
    """One call in flight at a time, waited for on any event loop, in arrival order."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._busy = False
        self._waiting: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._mutex:
            if not self._busy:
                self._busy = True
                return
            waiter = (loop, loop.create_future())
            self._waiting.append(waiter)
        try:
            await waiter[1]
        except asyncio.CancelledError:
            with self._mutex:
                if waiter in self._waiting:  # not granted: simply leave the line
                    self._waiting.remove(waiter)
                    raise
            self.release()  # granted as it was cancelled: pass the turn on
            raise

    def release(self) -> None:
        with self._mutex:
            while self._waiting:
                loop, future = self._waiting.popleft()
                try:
                    loop.call_soon_threadsafe(_grant, self, future)
                except RuntimeError:  # its loop closed: that waiter is gone
                    continue
                return
            self._busy = False


def _grant(turn: _Turn, future: asyncio.Future[None]) -> None:
    if future.done():  # cancelled meanwhile: its waiter saw it was granted and passes it on
        return
    future.set_result(None)


_turns: weakref.WeakKeyDictionary[object, _Turn] = weakref.WeakKeyDictionary()
_turns_lock = threading.Lock()


def _turn(gate: CallGate) -> _Turn:
    """The one call in flight of ``gate`` (of its ``flight``, when it names one)."""
    key = getattr(gate, "flight", None) or gate
    with _turns_lock:
        turn = _turns.get(key)
        if turn is None:
            turn = _turns[key] = _Turn()
        return turn
