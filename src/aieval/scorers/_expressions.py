"""The per-sample expression limit: time and memory for every expression a check runs on a sample.

A ``python`` check's expression, a ``regex`` check's match and a ``json_schema`` validation
(its ``pattern`` and ``patternProperties``) run Python's ``re``, which nothing in process can
interrupt, and an expression may build values of any size: all three are evaluated in a worker
process (:mod:`aieval.scorers._expression_worker`) whose address space is limited to
:data:`EXPRESSION_MEMORY_LIMIT_MB`. Workers are kept and reused across samples; one that takes
longer than :data:`EXPRESSION_TIME_LIMIT_S` is killed, one that runs out of memory exits, and
the next request starts a fresh one. Either is that sample's :class:`ScorerError`, naming the
check and the limit; the other samples carry on.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import pickle
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from aieval.errors import ScorerError

__all__ = ["EXPRESSION_MEMORY_LIMIT_MB", "EXPRESSION_TIME_LIMIT_S", "evaluate"]

#: Seconds one per-sample expression may run: a ``python`` expression, a ``regex`` match, a
#: ``json_schema`` validation (with its patterns).
EXPRESSION_TIME_LIMIT_S = 1.0
#: Megabytes of address space the worker evaluating these may use.
EXPRESSION_MEMORY_LIMIT_MB = 256

_WORKER = Path(__file__).with_name("_expression_worker.py")
# A worker imports simpleeval, regex and jsonschema before it says it is ready.
_START_S = 60.0
_IDLE_MAX = 4


class _Stopped(Exception):
    """The worker did not answer: ``why`` is ``time``, ``ended`` or ``start``."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class _Worker:
    """One worker process and its pipes; used by one thread at a time."""

    def __init__(self, megabytes: int) -> None:
        self.megabytes = megabytes
        self.owner = os.getpid()
        settings = json.dumps([[p for p in sys.path if p], megabytes])
        self.process = subprocess.Popen(
            [sys.executable, "-I", str(_WORKER), settings],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={},  # nothing of the environment (keys) is the expression's to see
            start_new_session=True,
        )
        self.buffer = b""
        try:
            self._line(time.monotonic() + _START_S)
        except BaseException as exc:
            self.close()
            if isinstance(exc, _Stopped):
                raise _Stopped("start") from None
            raise

    def ask(self, body: bytes, limit_s: float) -> dict[str, Any]:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(len(body).to_bytes(4, "big") + body)
            self.process.stdin.flush()
        except OSError:
            self.close()
            raise _Stopped("ended") from None
        try:
            answer: dict[str, Any] = json.loads(self._line(time.monotonic() + limit_s))
        except BaseException:
            self.close()  # killed mid-expression (time) or gone: a fresh one takes over
            raise
        return answer

    def _line(self, deadline: float) -> bytes:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        waiting = select.poll()  # not select(): a server may hold descriptors past 1024
        waiting.register(fd, select.POLLIN)
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not waiting.poll(max(1, int(left * 1000))):
                raise _Stopped("time")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise _Stopped("ended")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


_lock = threading.Lock()
_idle: list[_Worker] = []


def _take() -> _Worker:
    with _lock:
        while _idle:
            worker = _idle.pop()
            # after a fork the pipes are the parent's: leave them to it; after a change of the
            # limit (a test), the old worker goes
            if worker.owner == os.getpid():
                if worker.megabytes == EXPRESSION_MEMORY_LIMIT_MB:
                    return worker
                worker.close()
    return _Worker(EXPRESSION_MEMORY_LIMIT_MB)


def _give_back(worker: _Worker) -> None:
    with _lock:
        if len(_idle) < _IDLE_MAX:
            _idle.append(worker)
            return
    worker.close()


@atexit.register
def _close_idle() -> None:
    with _lock:
        while _idle:
            worker = _idle.pop()
            if worker.owner == os.getpid():
                worker.close()


def evaluate(check: str, what: str, request: tuple[Any, ...]) -> dict[str, Any]:
    """The worker's answer to ``request`` (``(kind, *arguments)``) under the expression limit.

    Raises:
        ScorerError: ``what`` (the expression, the validation) took longer than
            :data:`EXPRESSION_TIME_LIMIT_S` or needed more than
            :data:`EXPRESSION_MEMORY_LIMIT_MB`; the message names ``check`` and the limit.
    """
    limit_s = EXPRESSION_TIME_LIMIT_S
    try:
        body = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        raise _unsendable(check, what, str(exc)) from None
    try:
        worker = _take()
        answer = worker.ask(body, limit_s)
    except _Stopped as exc:
        if exc.why == "time":
            raise ScorerError(
                f"{check}: {what} took over {limit_s:g} s (the per-sample expression time "
                "limit) and was stopped"
            ) from None
        how = "did not start" if exc.why == "start" else "ended unexpectedly"
        raise ScorerError(f"{check}: the worker evaluating {what} {how}") from None
    if "memory" in answer:
        worker.close()
        raise ScorerError(
            f"{check}: {what} needed more than {EXPRESSION_MEMORY_LIMIT_MB} MB (the per-sample "
            "expression memory limit)"
        )
    _give_back(worker)
    if "unreadable" in answer:
        raise _unsendable(check, what, answer["unreadable"])
    return answer


def _unsendable(check: str, what: str, why: str) -> ScorerError:
    return ScorerError(
        f"{check}: the values {what} reads cannot be sent to its worker ({why}); give plain "
        "values: texts, numbers, lists and mappings of them"
    )
