"""``aieval serve`` as a real subprocess: the URL it prints, token handling, refusals."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "aieval", "serve", "--db", str(tmp_path / "runs.db"), *args]
    return subprocess.Popen(
        command,
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until_up(url: str, proc: subprocess.Popen[str], headers: dict[str, str]) -> None:
    deadline = time.monotonic() + 120  # generous: a busy machine starts it slowly
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited early: {proc.communicate()}")
        try:
            httpx.get(url, headers=headers, timeout=1.0)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("serve did not start")


@pytest.fixture
def stop() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_serve_with_token_from_the_environment(
    tmp_path: Path, stop: list[subprocess.Popen[str]]
) -> None:
    port = free_port()
    token = "cli-token-0123456789"
    proc = serve(tmp_path, "--port", str(port), env={"AIEVAL_TOKEN": token})
    stop.append(proc)
    url = f"http://127.0.0.1:{port}"
    wait_until_up(f"{url}/api/runs", proc, {})
    assert httpx.get(f"{url}/api/runs", timeout=60).status_code == 401
    authorized = httpx.get(
        f"{url}/api/runs", headers={"Authorization": f"Bearer {token}"}, timeout=60
    )
    assert authorized.status_code == 200 and authorized.json()["total"] == 0
    proc.terminate()
    _, err = proc.communicate(timeout=10)
    assert f"{url}/" in err and "?token=" in err
    assert token not in err, "the token itself is never printed"


def test_upload_tokens_from_the_environment_reach_only_uploads(
    tmp_path: Path, stop: list[subprocess.Popen[str]]
) -> None:
    port = free_port()
    tokens = {
        "AIEVAL_TOKEN": "cli-token-0123456789",
        "AIEVAL_UPLOAD_TOKENS": "ci-a=ta0123 ci-b=tb0123",
    }
    proc = serve(tmp_path, "--port", str(port), env=tokens)
    stop.append(proc)
    url = f"http://127.0.0.1:{port}"
    wait_until_up(f"{url}/api/runs", proc, {})
    answer = httpx.get(f"{url}/api/runs", headers={"Authorization": "Bearer tb0123"}, timeout=60)
    assert answer.status_code == 403 and "upload token 'ci-b'" in answer.text
    held = httpx.get(
        f"{url}/api/runs/import/holding?run_id=20260101-000000-0123abcd",
        headers={"Authorization": "Bearer ta0123"},
        timeout=60,
    )
    assert held.status_code == 200 and held.json()["run"] is None


def test_upload_tokens_without_the_servers_token_are_a_usage_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "AIEVAL_TOKEN"}
    proc = subprocess.run(
        [sys.executable, "-m", "aieval", "serve", "--upload-token", "ci=secret-0123", "--db",
         "x.db"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and "need the server's own token" in proc.stderr
    assert "secret-0123" not in proc.stderr and "Traceback" not in proc.stderr


def test_non_loopback_bind_without_token_is_a_usage_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "AIEVAL_TOKEN"}
    proc = subprocess.run(
        [sys.executable, "-m", "aieval", "serve", "--host", "0.0.0.0", "--db", "x.db"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "--unsafe-no-auth" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "x.db").exists(), "nothing is created before the refusal"


def test_dataset_root_must_be_a_folder(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "aieval", "serve", "--dataset-root", "missing", "--db", "x.db"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and "--dataset-root" in proc.stderr
