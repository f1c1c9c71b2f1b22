"""16 concurrent ``aieval run`` processes on one PostgreSQL store, one killed and resumed, while
``aieval runs`` and the server's ``/api/runs`` keep reading: every run complete, no sample lost
or stored twice, the resumed run's numbers those of an uninterrupted twin."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from tests.support.openai_server import Behaviour, Hang, OpenAIServer, Reply

#: 16 writers and the twin (17 runs, each its own connection, 34 requests held in flight at
#: once) race on creating the tables and write side by side: many, as the test needs; more only
#: adds Python processes to start, each seconds of CPU on CI's two busy cores.
WRITERS = 16
SAMPLES = 60
#: w0 is killed once it has stored this many samples (its later requests hang until then).
KILL_AFTER = 30
#: A wait fails once what it waits on has made no progress at all (no CPU time, nothing newly
#: stored) for this long: however busy the machine, a process that runs uses some CPU.
STALL_S = 120.0
AIEVAL = [sys.executable, "-m", "aieval"]


def _eval_file(folder: Path, k: int, base_url: str, rows_of: int) -> Path:
    """Eval ``w<k>`` (its target's model ``m<k>``); its rows are those of writer ``rows_of``
    (the killed run's twin shares them), a quarter of them failing ``exact_match``."""
    rows = "\n".join(
        f'{{"id": "s{i}", "prompt": "w{rows_of}-p{i}", "expected": "w{rows_of}-p{i}'
        f'{"" if i % 4 else "!"}"}}'
        for i in range(SAMPLES)
    )
    (folder / f"rows{k}.jsonl").write_text(rows + "\n", encoding="utf-8")
    path = folder / f"w{k}.yaml"
    path.write_text(
        f"name: w{k}\ndataset: rows{k}.jsonl\nscorers: [exact_match]\n"
        f"target: {{provider: openai-compatible, model: m{k}, base_url: '{base_url}'}}\n"
        "settings: {concurrency: 2}\n",
        encoding="utf-8",
    )
    return path


def _cpu_seconds(pid: int) -> float:
    """The CPU time process ``pid`` has used so far (-1.0 once it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return -1.0
    fields = stat.rsplit(")", 1)[1].split()  # after the command's name: state is field 3
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _finish(
    proc: subprocess.Popen[str], what: str, progress: Any = lambda: None
) -> tuple[str, str]:
    """``proc``'s output once it ends, however long a busy machine makes that take; fails when
    neither its CPU time nor ``progress()`` moved for :data:`STALL_S`."""
    mark, since = None, time.monotonic()
    while True:
        try:
            return proc.communicate(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass
        now = (_cpu_seconds(proc.pid), progress())
        if now != mark:
            mark, since = now, time.monotonic()
        elif time.monotonic() - since > STALL_S:
            proc.kill()
            out, err = proc.communicate()
            raise AssertionError(f"{what} made no progress for {STALL_S} s: {out}{err}")


class Counts:
    """Samples stored so far, read over one connection (autocommit: each read sees the newest)."""

    def __init__(self, url: str) -> None:
        self.conn = psycopg.connect(url, autocommit=True)

    def stored(self, name: str | None = None) -> int:
        made = self.conn.execute("SELECT to_regclass('samples') IS NOT NULL").fetchone()
        if not (made and made[0]):
            return 0  # no run has created the store's tables yet
        row = self.conn.execute(
            "SELECT COUNT(*) FROM samples JOIN runs ON runs.id = samples.run_id"
            " WHERE %s::text IS NULL OR runs.name = %s",
            (name, name),
        ).fetchone()
        return int(row[0]) if row else 0


def _wait_until(condition: Any, what: str, pid: int, progress: Any = lambda: None) -> None:
    """Wait for ``condition()`` (on other processes' state, so checked every 0.1 s); fails
    when neither process ``pid``'s CPU time nor ``progress()`` moved for :data:`STALL_S`."""
    mark, since = None, time.monotonic()
    while not condition():
        now = (_cpu_seconds(pid), progress())
        if now != mark:
            mark, since = now, time.monotonic()
        assert time.monotonic() - since < STALL_S, f"{what}: no progress for {STALL_S} s"
        time.sleep(0.1)


class Readers:
    """A thread reading the store as users do (``aieval runs``, ``GET /api/runs``) until
    stopped, keeping every failure."""

    def __init__(self, url: str, api: str, cwd: Path, env: dict[str, str]) -> None:
        self.url, self.api, self.cwd, self.env = url, api, cwd, env
        self.failures: list[str] = []
        self.cli_reads = self.api_reads = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stop.is_set():
            listing = subprocess.Popen(
                [*AIEVAL, "runs", "--db", self.url], cwd=self.cwd, env=self.env,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            try:
                _, err = _finish(listing, "aieval runs")
            except AssertionError as exc:
                self.failures.append(str(exc))
                continue
            if listing.returncode != 0:
                self.failures.append(f"aieval runs: {listing.returncode} {err}")
            else:
                self.cli_reads += 1
            for _ in range(5):
                try:
                    # a read timeout is a time without a byte from the server: no progress
                    answer = httpx.get(self.api, timeout=STALL_S)
                    answer.raise_for_status()
                    answer.json()
                    self.api_reads += 1
                except Exception as exc:  # every failure is kept and fails the test
                    self.failures.append(f"GET /api/runs: {exc!r}")
            # a reader's pace, not a wait for the writers: each `aieval runs` costs a process
            self.stop.wait(2.0)


@pytest.mark.slow
def test_16_writers_one_killed_and_resumed_while_readers_read(
    pg_url: str, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    held = threading.Event()  # w0 has had KILL_AFTER answers: its later requests hang
    resuming = threading.Event()  # w0 runs again: answer all of it
    w0_answered = 0

    def respond(body: Any) -> Behaviour:
        nonlocal w0_answered
        if body["model"] == "m0" and not resuming.is_set():
            if w0_answered == KILL_AFTER:
                held.set()
                return Hang()
            w0_answered += 1
        return Reply(body["messages"][-1]["content"], delay=0.02)

    openai_server.responder = respond
    # every answer waits until each of the WRITERS + 1 runs has its 2 requests in flight at once
    openai_server.hold_until_in_flight(2 * (WRITERS + 1), timeout=3600)
    files = [_eval_file(tmp_path, k, openai_server.base_url, rows_of=k) for k in range(WRITERS)]
    twin = _eval_file(tmp_path, WRITERS, openai_server.base_url, rows_of=0)
    env = {k: v for k, v in os.environ.items() if k != "AIEVAL_DB"}

    def start(path: Path, *extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*AIEVAL, "run", path.name, "--db", pg_url, "-q", *extra],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [*AIEVAL, "serve", "--db", pg_url, "--port", str(port)],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    writers: list[subprocess.Popen[str]] = []
    readers = Readers(pg_url, f"http://127.0.0.1:{port}/api/runs", tmp_path, env)
    counts = Counts(pg_url)
    try:

        def serving() -> bool:
            assert server.poll() is None, server.communicate()[1]
            try:
                return httpx.get(readers.api, timeout=STALL_S).status_code == 200
            except httpx.TransportError:
                return False

        _wait_until(serving, "the server to answer", server.pid)
        readers.thread.start()
        # w0 is killed and resumed; the twin (w16, the same rows) runs uninterrupted beside it
        writers = [start(path) for path in [*files, twin]]

        def w0_held() -> bool:
            for k, proc in enumerate(writers):
                assert proc.poll() in (None, 0), f"w{k} failed: {proc.communicate()[1]}"
            return held.wait(0.1)

        def all_cpu() -> float:
            return sum(_cpu_seconds(proc.pid) for proc in writers)

        _wait_until(w0_held, "w0 to have its answers", writers[0].pid, all_cpu)
        _wait_until(
            lambda: counts.stored("w0") == KILL_AFTER, "w0 to store its answers", writers[0].pid
        )
        writers[0].send_signal(signal.SIGKILL)
        assert writers[0].wait() == -signal.SIGKILL
        assert counts.stored("w0") == KILL_AFTER
        resuming.set()
        resumed = start(files[0], "--resume")
        for k, proc in enumerate([*writers[1:], resumed], start=1):
            _, err = _finish(proc, f"w{k % (WRITERS + 1)}", counts.stored)
            assert proc.returncode == 0, err
        readers.stop.set()
        readers.thread.join()
    finally:
        readers.stop.set()
        counts.conn.close()
        for proc in [*writers, server]:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert readers.failures == []
    assert readers.cli_reads >= 1 and readers.api_reads >= 5
    assert openai_server.max_in_flight >= 2 * (WRITERS + 1), "the writers never all overlapped"
    with psycopg.connect(pg_url) as conn:
        per_run = conn.execute(
            "SELECT runs.name, runs.status, COUNT(*), COUNT(DISTINCT samples.sample_id)"
            " FROM runs JOIN samples ON samples.run_id = runs.id GROUP BY runs.id"
        ).fetchall()
        scores = conn.execute("SELECT COUNT(*), COUNT(DISTINCT (run_id, sample_id)) FROM scores")
        assert scores.fetchone() == ((WRITERS + 1) * SAMPLES,) * 2
    assert sorted(per_run) == sorted(
        (f"w{k}", "completed", SAMPLES, SAMPLES) for k in range(WRITERS + 1)
    )
    from aieval import Store

    with Store(pg_url) as store:
        (killed,) = store.list_runs(name="w0")
        (reference,) = store.list_runs(name=f"w{WRITERS}")
    keys = ("samples", "passed", "pass_rate", "unscored", "target_errors", "scorers", "tokens")
    assert killed.metrics is not None and reference.metrics is not None
    assert {k: killed.metrics[k] for k in keys} == {k: reference.metrics[k] for k in keys}
    assert killed.metrics["passed"] == SAMPLES * 3 // 4
