"""The command line on a PostgreSQL store: --db URL and AIEVAL_DB=URL end to end."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg
import pytest
from tests.cli.test_cli import project  # noqa: F401  (the fixture)
from tests.support.cli import Done, run_main
from tests.support.foreground import foreground
from tests.support.held import held_eval
from tests.support.postgres import ODD_PASSWORD, TEAMMATE_PASSWORD, PostgresServer, database_of

from aieval import Store

AIEVAL = [sys.executable, "-m", "aieval"]


def cli(*args: str, cwd: Path, env_db: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AIEVAL_DB"}
    if env_db is not None:
        env["AIEVAL_DB"] = env_db
    return subprocess.run(
        [*AIEVAL, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120
    )


@pytest.fixture
def in_process(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Done]:
    """:func:`cli` through ``aieval.cli.main`` in this process (what a command prints)."""

    def invoke(*args: str, cwd: Path, env_db: str | None = None) -> Done:
        monkeypatch.delenv("AIEVAL_DB", raising=False)
        env = {"AIEVAL_DB": env_db} if env_db is not None else None
        return run_main(capsys, monkeypatch, *args, cwd=cwd, env=env)

    return invoke


def _with_password(url: str) -> str:
    return url.replace("aieval@", f"teammate:{TEAMMATE_PASSWORD}@")


def test_run_runs_report_compare_on_postgres(
    project: Path,  # noqa: F811
    pg_url: str,
    in_process: Callable[..., Done],
) -> None:
    url = _with_password(pg_url)
    outputs: list[Done | subprocess.CompletedProcess[str]] = []
    # the first run in a process of its own, as a teammate's shell starts it; the rest in-process
    for model, command in (("v1", cli), ("v2", in_process)):
        done = command("run", "eval.yaml", "--model", model, "--db", url, cwd=project)
        assert done.returncode == 0, done.stderr
        outputs.append(done)
    assert "stored in postgresql://teammate:***@" in outputs[0].stdout
    listing = in_process("runs", "--db", url, cwd=project)
    assert listing.returncode == 0, listing.stderr
    assert "cli-demo" in listing.stdout
    with Store(pg_url) as store:
        runs = store.list_runs(name="cli-demo")
        assert {r.model for r in runs} == {"v1", "v2"}
        v1 = next(r.id for r in runs if r.model == "v1")
        v2 = next(r.id for r in runs if r.model == "v2")
        assert store.count_samples(v1) == 25
    report = in_process("report", v2, "--db", url, "--format", "json", cwd=project)
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["samples"] == 25
    compared = in_process("compare", v1, v2, "--db", url, "--format", "json", cwd=project)
    assert compared.returncode == 3, compared.stderr  # inconclusive: 25 paired examples
    assert json.loads(compared.stdout)["decision"]["outcome"] == "inconclusive"
    from_env = in_process("runs", cwd=project, env_db=url)
    assert from_env.returncode == 0 and "cli-demo" in from_env.stdout
    # nothing shown and nothing stored holds the password; no file is named after the URL
    shown = "".join(p.stdout + p.stderr for p in (*outputs, listing, report, compared, from_env))
    assert TEAMMATE_PASSWORD not in shown
    with psycopg.connect(pg_url) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
        assert {"runs", "samples", "scores"} <= {t for (t,) in tables}
        for (table,) in tables:
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            assert TEAMMATE_PASSWORD not in repr(rows), table
    assert not list(project.glob("postgres*")) and not (project / "aieval.db").exists()


def test_other_schemes_are_refused_and_write_nothing(
    project: Path,  # noqa: F811
    in_process: Callable[..., Done],
) -> None:
    for args in (["run", "eval.yaml", "--db", "mysql://u@127.0.0.1/db"], ["runs"]):
        env_db = "mysql://u@127.0.0.1/db" if args == ["runs"] else None
        done = in_process(*args, cwd=project, env_db=env_db)
        assert done.returncode != 0
        assert "store location scheme 'mysql' is not supported" in done.stderr
        assert "Traceback" not in done.stderr
    assert not list(project.glob("mysql*")) and not (project / "aieval.db").exists()


@pytest.mark.slow
def test_serve_on_postgres(
    project: Path,  # noqa: F811
    pg_url: str,
    in_process: Callable[..., Done],
) -> None:
    url = _with_password(pg_url)
    # the run in-process; the server in a process of its own, as `aieval serve` runs
    assert in_process("run", "eval.yaml", "--model", "v2", "--db", url, cwd=project).returncode == 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "AIEVAL_DB"}
    server = subprocess.Popen(
        [*AIEVAL, "serve", "--db", url, "--port", str(port)],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        runs = None
        deadline = time.monotonic() + 60
        while runs is None and time.monotonic() < deadline and server.poll() is None:
            try:
                runs = httpx.get(f"http://127.0.0.1:{port}/api/runs", timeout=5).json()
            except httpx.TransportError:
                time.sleep(0.2)  # the server is still starting: poll until it answers
        assert runs is not None, server.stderr.read() if server.poll() is not None else "no answer"
        (row,) = runs["runs"] if isinstance(runs, dict) else runs
        samples = httpx.get(
            f"http://127.0.0.1:{port}/api/runs/{row['id']}/samples", timeout=30
        ).json()
        assert samples["total"] == 25
    finally:
        server.terminate()
        out, err = server.communicate(timeout=30)
    assert TEAMMATE_PASSWORD not in out + err
    assert not list(project.glob("postgres*"))


@pytest.mark.slow
def test_an_ambiguous_or_unparsable_url_is_one_line_without_the_password(
    project: Path,  # noqa: F811
    pg_server: PostgresServer,
    in_process: Callable[..., Done],
) -> None:
    where = f"{pg_server.host}:{pg_server.port}/{database_of(pg_server, 'odd', ODD_PASSWORD)}"
    urls = {
        f"postgresql://odd:{ODD_PASSWORD}@{where}": "is ambiguous",
        f"postgresql://bob:Winter@2026db@{where}": "is ambiguous",
        f"postgresql://weird:p@ss:w/rd?#%&=+ q@{where}": "is ambiguous",
        "postgresql://aieval:Winter26@[::1/aieval": "is not a valid URL",
    }
    for url, problem in urls.items():
        done = in_process("runs", "--db", url, cwd=project)
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.strip().splitlines()  # one line, no traceback
        assert line.startswith("error: store location 'postgresql://") and problem in line
        assert ":***@" in line and "Winter" not in line and "2026db" not in line
        assert "p@ss" not in line and "w/rd" not in line and "+ q" not in line
    assert not (project / "aieval.db").exists()


@pytest.mark.slow
def test_an_uppercase_scheme_works_and_libpq_tabs_show_as_spaces(
    project: Path,  # noqa: F811
    pg_url: str,
    in_process: Callable[..., Done],
) -> None:
    upper = "PostgreSQL" + pg_url[len("postgresql") :]
    done = in_process("run", "eval.yaml", "--model", "v1", "--db", upper, "-q", cwd=project)
    assert done.returncode == 0, done.stderr
    listing = in_process("runs", "--db", upper, cwd=project)
    assert listing.returncode == 0 and "cli-demo" in listing.stdout, listing.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    refused = in_process("runs", "--db", f"postgresql://aieval@127.0.0.1:{port}/x", cwd=project)
    assert refused.returncode != 0 and "Is the server running" in refused.stderr
    assert "\\x09" not in refused.stderr and "\t" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr  # one line


@pytest.mark.slow
def test_the_resume_hint_on_postgres_says_where_the_password_comes_from(
    tmp_path: Path, pg_url: str
) -> None:
    url = _with_password(pg_url)
    gate = held_eval(tmp_path, name="s", rows=6, held_from=2, settings="{concurrency: 2}")
    env = {k: v for k, v in os.environ.items() if k != "AIEVAL_DB"}
    child = subprocess.Popen(
        foreground([*AIEVAL, "run", "s.yaml", "--db", url, "-q"]),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for_samples(pg_url, 2, child)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)
    finally:
        gate.touch()
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, err
    shown = url.replace(f":{TEAMMATE_PASSWORD}@", ":***@")
    # quoted for a shell: the *** would otherwise be a glob
    hint = f"resume with aieval run s.yaml --resume --db '{shown}' # give the password through"
    assert hint + " PGPASSWORD or ~/.pgpass" in " ".join(err.split())
    assert TEAMMATE_PASSWORD not in err
    no_password = cli("run", "s.yaml", "--db", pg_url, "--resume", "-q", cwd=tmp_path)
    assert no_password.returncode == 0, no_password.stderr
    assert "PGPASSWORD" not in no_password.stderr


def _wait_for_samples(url: str, at_least: int, proc: subprocess.Popen[str]) -> None:
    """Wait until ``proc`` has stored ``at_least`` samples in the database at ``url``."""
    deadline = time.monotonic() + 180  # a bound for what must eventually happen
    count = 0
    while count < at_least:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{count} of {at_least} samples stored"
        with psycopg.connect(url) as conn:
            exists = conn.execute("SELECT to_regclass('samples')").fetchone()
            if exists is not None and exists[0] is not None:
                row = conn.execute("SELECT COUNT(*) FROM samples").fetchone()
                count = row[0] if row else 0
        time.sleep(0.05)
