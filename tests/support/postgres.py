"""A real PostgreSQL server for tests: Debian's ``initdb`` and ``pg_ctl`` into a temporary folder.

The server runs as an unprivileged user (``initdb`` refuses root; the tests run as root in CI),
listens on 127.0.0.1 on a free port with its unix socket inside the folder, and is stopped when
the session ends. Two roles exist: ``aieval`` (superuser, trusted on 127.0.0.1: no password) and
``teammate`` (password :data:`TEAMMATE_PASSWORD`, checked with scram-sha-256), so a test can use
a URL that carries a real password.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ODD_PASSWORD",
    "TEAMMATE_PASSWORD",
    "PostgresServer",
    "database_of",
    "find_binaries",
    "postgres_server",
    "restart_postgres",
]

#: The password of the ``teammate`` role (a test greps outputs and stores for it).
TEAMMATE_PASSWORD = "s3cr3t-Pw-7f1c"

#: A password that a URL must percent-encode: it holds ``@``, ``:``, ``/``, ``?``, ``#``, ``%``,
#: ``&``, ``=``, ``+`` and a space (see :func:`database_of`).
ODD_PASSWORD = "Winter@2026db:p/ss?#%&=+ q"

_HBA = """\
local all all trust
host all aieval 127.0.0.1/32 trust
host all all 127.0.0.1/32 scram-sha-256
"""


def find_binaries() -> Path | None:
    """The folder of the newest Debian PostgreSQL server binaries, or ``None`` when absent."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path and shutil.which("pg_ctl") else None


@dataclass(frozen=True)
class PostgresServer:
    """A running server: its port and how to reach it."""

    host: str
    port: int
    folder: Path
    binaries: Path | None = None
    options: str = ""

    @property
    def url(self) -> str:
        """The URL of the ``postgres`` database as the trusted ``aieval`` superuser."""
        return self.database_url("postgres")

    def database_url(self, database: str, *, user: str = "aieval", password: str = "") -> str:
        """The URL of ``database`` as ``user`` (with ``password`` in it when given)."""
        auth = f"{user}:{password}" if password else user
        return f"postgresql://{auth}@{self.host}:{self.port}/{database}"

    def stop(self, mode: str = "fast") -> None:
        """``pg_ctl stop -m mode``: sessions are cut and new connections refused until
        :meth:`start`."""
        self._pg_ctl("-m", mode, "stop")

    def start(self) -> None:
        """``pg_ctl start`` again after :meth:`stop` (same port, same data)."""
        self._pg_ctl("-l", str(self.folder / "log"), "-t", "120", "-o", self.options, "start")

    def _pg_ctl(self, *args: str) -> None:
        assert self.binaries is not None
        done = subprocess.run(
            _as_nobody(
                [str(self.binaries / "pg_ctl"), "-D", str(self.folder / "data"), "-w", *args]
            ),
            capture_output=True,
            env={**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"},
            cwd=self.folder,
        )
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl {' '.join(args)} failed: {done.stderr.decode()}")

    def create_database(self, *, template: str | None = None) -> str:
        """A fresh empty database (owned by ``teammate`` too), or a copy of the database of the
        URL ``template`` (no session may be connected to it); returns its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        copy = f" TEMPLATE {template.rsplit('/', 1)[-1]}" if template else ""
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name} OWNER teammate{copy}")
        return self.database_url(name)

    def drop_database(self, url: str) -> None:
        """Drop the database of ``url`` (made by :meth:`create_database`), cutting any session
        still connected to it, so the server does not accumulate one database per test."""
        import psycopg
        from psycopg import sql

        name = url.rsplit("/", 1)[-1]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_nobody(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *args]


@contextmanager
def postgres_server(binaries: Path, *, durable: bool = False) -> Iterator[PostgresServer]:
    """Start a PostgreSQL server from ``binaries`` in a temporary folder; stop it on exit.

    Tests run it with ``fsync=off``; ``durable`` keeps PostgreSQL's default durability (a
    benchmark's server).
    """
    folder = Path(tempfile.mkdtemp(prefix="aieval-pg-"))
    data = folder / "data"
    pwfile = folder / "pw"
    pwfile.write_text("unused-superuser-password\n")
    if os.geteuid() == 0:
        shutil.chown(folder, "nobody", "nogroup")
        shutil.chown(pwfile, "nobody", "nogroup")
    env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
    subprocess.run(
        _as_nobody(
            [
                str(binaries / "initdb"),
                "-D",
                str(data),
                "-U",
                "aieval",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--auth=trust",
                "--no-sync",  # a throwaway cluster: nothing to flush to disk
                f"--pwfile={pwfile}",
            ]
        ),
        check=True,
        capture_output=True,
        env=env,
        cwd=folder,
    )
    (data / "pg_hba.conf").write_text(_HBA)
    if os.geteuid() == 0:
        shutil.chown(data / "pg_hba.conf", "nobody", "nogroup")
    port = _free_port()
    options = f"-h 127.0.0.1 -p {port} -k {folder} -c max_connections=200"
    if not durable:
        options += " -c fsync=off"
    started = subprocess.run(
        _as_nobody(
            [
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(folder / "log"),
                "-w",
                "-t",
                "120",
                "-o",
                options,
                "start",
            ]
        ),
        capture_output=True,
        env=env,
        cwd=folder,
    )
    try:
        if started.returncode != 0:
            log = (folder / "log").read_text() if (folder / "log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {started.stderr.decode()}\n{log}")
        server = PostgresServer("127.0.0.1", port, folder, binaries, options)
        import psycopg

        with psycopg.connect(server.url, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE teammate LOGIN PASSWORD '{TEAMMATE_PASSWORD}'")
        yield server
    finally:
        subprocess.run(
            _as_nobody(
                [str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]
            ),
            capture_output=True,
            env=env,
            cwd=folder,
        )
        shutil.rmtree(folder, ignore_errors=True)


def restart_postgres(server: PostgresServer, binaries: Path) -> None:
    """Restart ``server`` (``pg_ctl restart -m fast``: every connection is closed) on its port."""
    env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
    subprocess.run(
        _as_nobody(
            [
                str(binaries / "pg_ctl"),
                "-D",
                str(server.folder / "data"),
                "-l",
                str(server.folder / "log"),
                "-m",
                "fast",
                "-w",
                "-t",
                "120",
                "restart",
            ]
        ),
        check=True,
        capture_output=True,
        env=env,
        cwd=server.folder,
    )


def database_of(server: PostgresServer, user: str, password: str) -> str:
    """A fresh database owned by the login role ``user`` (created with ``password``, checked
    with scram-sha-256, if it does not exist yet); returns the database's name."""
    import psycopg
    from psycopg import sql

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server.url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (user,)).fetchone()
        if exists is None:
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                    sql.Identifier(user), sql.Literal(password)
                )
            )
        conn.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(name), sql.Identifier(user)
            )
        )
    return name
