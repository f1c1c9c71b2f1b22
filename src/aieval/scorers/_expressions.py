"""The per-sample expression limit: time and memory for every bounded check a sample runs.

A ``python`` check's expression, a ``regex`` check's pattern (compiled and matched), a
``json_schema`` check (its search of the output, its validation, the schema's own check) and the
checks whose parsers or algorithms are not linear in the output (``is_html``, ``is_sql``,
``levenshtein``) run code that nothing in process can interrupt, and may build values of any
size: all are evaluated in worker processes (:mod:`aieval.scorers._expression_worker`) whose
address space is limited to :data:`EXPRESSION_MEMORY_LIMIT_MB`. At most :data:`WORKERS` run at
once; they are kept and reused across samples. One that takes longer than
:data:`EXPRESSION_TIME_LIMIT_S` is killed, one that runs out of memory exits, and the next
request starts a fresh one. Either is that sample's :class:`ScorerError`, naming the check and
the limit; the other samples carry on. Within :func:`sample_budget` (the runner opens one per
sample) all of a sample's bounded checks together have :data:`SAMPLE_TIME_BUDGET_S`: once it is
used up, the sample's remaining bounded checks are its errors without running.

:func:`evaluate` blocks its thread: the runner calls the bounded checks off the event loop.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import json
import os
import pickle
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aieval.errors import ScorerError

__all__ = [
    "EXPRESSION_MEMORY_LIMIT_MB",
    "EXPRESSION_TIME_LIMIT_S",
    "SAMPLE_TIME_BUDGET_S",
    "WORKERS",
    "evaluate",
    "in_process_budget",
    "sample_budget",
    "shown",
]

#: Seconds one bounded check may run on a sample: a ``python`` expression, a ``regex`` match,
#: a ``json_schema`` search and validation, an ``is_html`` or ``is_sql`` parse, a distance.
EXPRESSION_TIME_LIMIT_S = 1.0
#: Megabytes of address space a worker evaluating these may use.
EXPRESSION_MEMORY_LIMIT_MB = 256
#: Seconds all of one sample's bounded checks may take together.
SAMPLE_TIME_BUDGET_S = 3.0
#: Workers running at once (one per CPU, at least 2): a slow sample holds one, not all.
WORKERS = max(2, os.cpu_count() or 1)

# the module a request kind needs, imported once per worker before its first such request
_NEEDS = {"html": "html5lib", "sql": "sqlglot", "levenshtein": "rapidfuzz.distance"}

_WORKER = Path(__file__).with_name("_expression_worker.py")
# A worker imports simpleeval, regex and jsonschema before it says it is ready.
_START_S = 60.0


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
        self.imported: set[str] = set()
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
_slots = threading.BoundedSemaphore(WORKERS)


class _Budget:
    """What is left of one sample's check time (its checks run one after another)."""

    def __init__(self, seconds: float) -> None:
        self.left = seconds


_budget: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "aieval_check_budget", default=None
)


@contextlib.contextmanager
def sample_budget() -> Iterator[None]:
    """Within this block (one sample: threads started from it see it too), all bounded checks
    together may take :data:`SAMPLE_TIME_BUDGET_S`."""
    token = _budget.set(_Budget(SAMPLE_TIME_BUDGET_S))
    try:
        yield
    finally:
        _budget.reset(token)


@contextlib.contextmanager
def in_process_budget(check: str) -> Iterator[None]:
    """Charge a check that runs in this process (and cannot be stopped) to the sample's budget:
    refused before it starts when the budget is used up, its time taken from what is left.

    Raises:
        ScorerError: the sample's checks already used up :data:`SAMPLE_TIME_BUDGET_S`.
    """
    budget = _budget.get()
    if budget is None:
        yield
        return
    if budget.left <= 0:
        raise ScorerError(
            f"{check}: not run: this sample's checks used up their {SAMPLE_TIME_BUDGET_S:g} s "
            "(the per-sample check time budget)"
        )
    started = time.monotonic()
    try:
        yield
    finally:
        budget.left -= time.monotonic() - started


def shown(text: str, limit: int = 200) -> str:
    """``text`` for a message: its first ``limit`` characters and its length when longer."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


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
        if len(_idle) < WORKERS:
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

    Blocks until a worker is free (at most :data:`WORKERS` run at once) and it answers.

    Raises:
        ScorerError: ``what`` (the expression, the validation) took longer than
            :data:`EXPRESSION_TIME_LIMIT_S` (or than what is left of the sample's budget) or
            needed more than :data:`EXPRESSION_MEMORY_LIMIT_MB`; or the sample's budget was
            used up before it ran. The message names ``check`` and the limit.
    """
    budget = _budget.get()
    limit_s, which = EXPRESSION_TIME_LIMIT_S, "the per-sample expression time limit"
    if budget is not None:
        if budget.left <= 0:
            raise ScorerError(
                f"{check}: not run: this sample's checks used up their {SAMPLE_TIME_BUDGET_S:g} s "
                "(the per-sample check time budget)"
            )
        if budget.left < limit_s:
            limit_s = budget.left
            which = f"what was left of the sample's {SAMPLE_TIME_BUDGET_S:g} s check time budget"
    try:
        body = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        raise _unsendable(check, what, str(exc)) from None
    with _slots:
        return _run(check, what, request[0], body, limit_s, which, budget)


def _run(
    check: str,
    what: str,
    kind: str,
    body: bytes,
    limit_s: float,
    which: str,
    budget: _Budget | None,
) -> dict[str, Any]:
    try:
        worker = _take()
        module = _NEEDS.get(kind)
        if module is not None and module not in worker.imported:
            worker.ask(pickle.dumps(("import", module)), _START_S)
            worker.imported.add(module)
        started = time.monotonic()  # the check's time: a worker's start does not count
        try:
            answer = worker.ask(body, limit_s)
        finally:
            if budget is not None:
                budget.left -= time.monotonic() - started
    except _Stopped as exc:
        if exc.why == "time":
            raise ScorerError(
                f"{check}: {what} took over {limit_s:.3g} s ({which}) and was stopped"
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
