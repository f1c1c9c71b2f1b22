"""32 concurrent ``aieval run`` processes on one PostgreSQL store, one killed and resumed, while
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
from tests.support.openai_server import OpenAIServer, Reply

WRITERS = 32
SAMPLES = 200
AIEVAL = [sys.executable, "-m", "aieval"]


def _eval_file(folder: Path, k: int, base_url: str, rows_of: int) -> Path:
    """Eval ``w<k>``; its rows are those of writer ``rows_of`` (the killed run's twin shares
    them), a quarter of them failing ``exact_match``."""
    rows = "\n".join(
        f'{{"id": "s{i}", "prompt": "w{rows_of}-p{i}", "expected": "w{rows_of}-p{i}'
        f'{"" if i % 4 else "!"}"}}'
        for i in range(SAMPLES)
    )
    (folder / f"rows{k}.jsonl").write_text(rows + "\n", encoding="utf-8")
    path = folder / f"w{k}.yaml"
    path.write_text(
        f"name: w{k}\ndataset: rows{k}.jsonl\nscorers: [exact_match]\n"
        f"target: {{provider: openai-compatible, model: m, base_url: '{base_url}'}}\n"
        "settings: {concurrency: 2}\n",
        encoding="utf-8",
    )
    return path


def _stored(url: str, name: str) -> int:
    with psycopg.connect(url) as conn:
        made = conn.execute("SELECT to_regclass('samples') IS NOT NULL").fetchone()
        if not (made and made[0]):
            return 0  # no run has created the store's tables yet
        row = conn.execute(
            "SELECT COUNT(*) FROM samples JOIN runs ON runs.id = samples.run_id"
            " WHERE runs.name = %s",
            (name,),
        ).fetchone()
    return int(row[0]) if row else 0


def _wait_until(condition: Any, what: str, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)  # polling a condition on other processes' progress


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
            listing = subprocess.run(
                [*AIEVAL, "runs", "--db", self.url],
                cwd=self.cwd, env=self.env, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            if listing.returncode != 0:
                self.failures.append(f"aieval runs: {listing.returncode} {listing.stderr}")
            else:
                self.cli_reads += 1
            for _ in range(5):
                try:
                    answer = httpx.get(self.api, timeout=60)
                    answer.raise_for_status()
                    answer.json()
                    self.api_reads += 1
                except Exception as exc:  # every failure is kept and fails the test
                    self.failures.append(f"GET /api/runs: {exc!r}")
            # a reader's pace, not a wait for the writers: each `aieval runs` costs a process
            self.stop.wait(2.0)


@pytest.mark.slow
def test_32_writers_one_killed_and_resumed_while_readers_read(
    pg_url: str, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = lambda body: Reply(body["messages"][-1]["content"], delay=0.02)
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
    try:

        def serving() -> bool:
            assert server.poll() is None, server.communicate()[1]
            try:
                return httpx.get(readers.api, timeout=5).status_code == 200
            except httpx.TransportError:
                return False

        _wait_until(serving, "the server to answer")
        readers.thread.start()
        # w0 is killed and resumed; the twin (w32, the same rows) runs uninterrupted beside it
        writers = [start(path) for path in [*files, twin]]
        _wait_until(lambda: _stored(pg_url, "w0") >= 30, "w0 to store 30 samples")
        writers[0].send_signal(signal.SIGKILL)
        assert writers[0].wait(timeout=60) == -signal.SIGKILL
        killed_at = _stored(pg_url, "w0")
        assert 30 <= killed_at < SAMPLES, "w0 ended before it was killed"
        resumed = start(files[0], "--resume")
        for proc in [*writers[1:], resumed]:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
        readers.stop.set()
        readers.thread.join(timeout=300)
    finally:
        readers.stop.set()
        for proc in [*writers, server]:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert readers.failures == []
    assert readers.cli_reads >= 1 and readers.api_reads >= 5
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
