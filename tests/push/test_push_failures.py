"""``push`` failures: transient ones are retried, permanent ones fail at once with a message that
says what to do (never a promise that pushing again will work when it cannot)."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import trustme
import uvicorn
from tests.push.helpers import cli, make_interrupted_run, make_run, sample_count
from tests.server.conftest import AppFactory
from tests.support.server import LiveServer

from aieval._records import SampleRecord, ScoreRecord
from aieval.errors import PushError
from aieval.push import ServerTarget, StoreTarget, push_runs
from aieval.server._uploads import MAX_BODY_BYTES
from aieval.store import Store

TOKEN = "push-test-token-0123456789abcdef"
NOTHING_HELD = {"version": 1, "run": None, "sample_ids": [], "digests": {}}


class Scripted:
    """A real HTTP server on 127.0.0.1 that answers the upload endpoint from a script: each
    POST takes the next ``(status, headers, body)``; the holding query answers "nothing held"."""

    def __init__(self, answers: list[tuple[int, dict[str, str], Any]]) -> None:
        self.answers = answers
        self.posts = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._answer(200, {}, NOTHING_HELD)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                owner.posts += 1
                self._answer(*owner.answers[min(owner.posts, len(owner.answers)) - 1])

            def _answer(self, status: int, headers: dict[str, str], body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                for key, value in {**headers, "Content-Type": "application/json"}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return None

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)

    def __enter__(self) -> Scripted:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.shutdown()
        self.http.server_close()


def push(source: Path, url: str, **kw: Any) -> Any:
    target = ServerTarget(url, TOKEN, **kw)
    try:
        with Store(source) as src:
            return push_runs(src, target)
    finally:
        target.close()


def refusal(message: str) -> dict[str, Any]:
    return {"message": message, "reasons": [message]}


def test_a_500_is_sent_again_once_and_the_server_message_shown(tmp_path: Path) -> None:
    src = tmp_path / "local.db"
    run_id = make_run(src, "qa", 3)
    denied = refusal("cannot write run: permission denied for table runs")
    with Scripted([(500, {}, denied)]) as server, pytest.raises(PushError) as failed:
        push(src, server.url)
    assert server.posts == 2
    message = str(failed.value)
    assert f"run {run_id}" in message and "permission denied for table runs" in message
    assert "(after 2 attempts)" in message and "push again once that is fixed" in message
    assert "resumes with it" not in message


@pytest.mark.parametrize("status", [400, 403, 404, 409, 422])
def test_a_4xx_is_not_sent_again(tmp_path: Path, status: int) -> None:
    src = tmp_path / "local.db"
    make_run(src, "qa", 3)
    with Scripted([(status, {}, refusal("no, never"))]) as server:
        with pytest.raises(PushError, match=rf"refused the upload \({status}: no, never\)"):
            push(src, server.url)
        assert server.posts == 1


def test_busy_answers_are_retried_honouring_retry_after(tmp_path: Path) -> None:
    src = tmp_path / "local.db"
    run_id = make_run(src, "qa", 3)
    done = {"run_id": run_id, "outcome": "new", "samples_added": 3}
    script = [
        (503, {"Retry-After": "0"}, refusal("starting")),
        (502, {}, refusal("bad gateway")),
        (200, {}, {}),  # the part
        (429, {"Retry-After": "0"}, refusal("16 uploads are in progress; retry later")),
        (200, {}, done),  # the commit
    ]
    with Scripted(script) as server:
        summary = push(src, server.url)
    assert server.posts == 5
    assert (summary.count("new"), summary.samples) == (1, 3)


def test_a_server_that_does_not_answer_is_retried_then_push_again_resumes(
    tmp_path: Path,
) -> None:
    src = tmp_path / "local.db"
    make_run(src, "qa", 3)
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    with pytest.raises(PushError, match=r"did not answer.*\(after 2 attempts\).*resumes with it"):
        push(src, url, attempts=2)


def test_a_sample_over_the_server_limit_fails_at_once_naming_it(
    make_app: AppFactory, tmp_path: Path, server_store: str
) -> None:
    src = tmp_path / "local.db"
    with Store(src) as store:
        run_id = store.create_run(name="huge")
        samples = [
            SampleRecord(id=f"s{i}", index=i, input={"prompt": "p"}, expected="x",
                         prediction=text, scores={"m": ScoreRecord(value=1.0)}, passed=True)
            for i, text in enumerate(["small", "x" * (MAX_BODY_BYTES + 1), "small too"])
        ]  # fmt: skip
        store.record_samples(run_id, samples)
        store.finish_run(run_id, status="completed", metrics={})
    with LiveServer(make_app(token=TOKEN)) as live, pytest.raises(PushError) as failed:
        push(src, live.url)
    message = str(failed.value)
    assert f"sample 's1' of run {run_id} is too large to upload" in message
    assert f"{MAX_BODY_BYTES} bytes at most" in message and "413" in message
    assert "attempts" not in message and "resumes with it" not in message
    assert sample_count(server_store) == 0


@pytest.fixture
def tls_server(make_app: AppFactory, tmp_path: Path) -> Iterator[tuple[LiveServer, Path]]:
    """A server speaking https with a certificate of a private CA; the CA's PEM file."""
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1")
    key_and_cert, ca_file = tmp_path / "server.pem", tmp_path / "ca.pem"
    leaf.private_key_and_cert_chain_pem.write_to_path(key_and_cert)
    ca.cert_pem.write_to_path(ca_file)
    live = LiveServer(make_app(token=TOKEN))
    config = uvicorn.Config(
        live.server.config.app,
        log_level="warning",
        lifespan="on",
        ssl_certfile=str(key_and_cert),
        ssl_keyfile=str(key_and_cert),
    )
    live.server = uvicorn.Server(config)
    live.thread = threading.Thread(
        target=live.server.run, kwargs={"sockets": [live.sock]}, daemon=True
    )
    live.url = f"https://127.0.0.1:{live.port}"
    with live:
        yield live, ca_file


@pytest.mark.slow
def test_an_untrusted_certificate_fails_at_once_and_ssl_cert_file_fixes_it(
    tls_server: tuple[LiveServer, Path], tmp_path: Path, server_store: str
) -> None:
    live, ca_file = tls_server
    src = tmp_path / "local.db"
    make_run(src, "qa", 3)
    env = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
    env["AIEVAL_TOKEN"] = TOKEN
    refused = cli("push", "--db", str(src), "--to", live.url, env=env)
    assert refused.returncode == 1
    assert "certificate not trusted" in refused.stderr
    assert "set SSL_CERT_FILE to your CA bundle" in refused.stderr
    assert "attempts" not in refused.stderr and "resumes with it" not in refused.stderr
    trusted = {**env, "SSL_CERT_FILE": str(ca_file)}
    pushed = cli("push", "--db", str(src), "--to", live.url, env=trusted)
    assert pushed.returncode == 0, pushed.stderr
    assert sample_count(server_store) == 3


def _live_there(team: str, src: Path) -> str:
    """A run pushed to ``team``, then resumed there by this process (live: it is running)."""
    run_id = make_interrupted_run(src, "long", 6, stop_after=2)
    with Store(src) as source:
        push_runs(source, StoreTarget(Store(team)))
    with Store(team) as store:
        store.mark_running(run_id)
    return run_id


def _assert_running_there(message: str, run_id: str) -> None:
    assert f"run {run_id} is running on the destination" in message
    assert f"(owner pid {os.getpid()} on " in message and "heartbeat " in message
    assert message.endswith("push it after it ends")
    assert "Resuming" not in message


def test_a_run_live_on_the_destination_store_is_refused_in_push_words(
    tmp_path: Path, store_location: str
) -> None:
    src = tmp_path / "local.db"
    run_id = _live_there(store_location, src)
    with Store(src) as source, pytest.raises(PushError) as failed:
        push_runs(source, StoreTarget(Store(store_location)))
    _assert_running_there(str(failed.value), run_id)


def test_a_run_live_on_the_destination_server_is_refused_in_push_words(
    make_app: AppFactory, tmp_path: Path, server_store: str
) -> None:
    src = tmp_path / "local.db"
    run_id = _live_there(server_store, src)
    with LiveServer(make_app(token=TOKEN)) as live, pytest.raises(PushError) as failed:
        push(src, live.url)
    _assert_running_there(str(failed.value), run_id)
