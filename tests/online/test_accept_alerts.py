"""Issue 44's acceptance: a webhook receiver on loopback sees one alert per incident. A rule
of ``aieval serve --online`` with a floor: three hour windows of failing traces, scored by the
server's own worker, are one incident, POSTed once, also after more cycles and a restart.

Windows are hours of the traces' arrival, which a test cannot wait for: the traces are kept in
the store as received in the past hours (as the server keeps an export request), and the
server then examines, scores, closes and alerts on them with the real clock."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests.online.accept_support import served, status, status_adds_up
from tests.support.cli import Cli
from tests.support.online import add_trace, trace_ids
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store
from aieval.online import window_run_name, window_start

RULES = """\
rules:
  - name: watched
    filter: {{service_name: shop}}
    settle_s: 0
    scoring:
      scorers:
        - llm_judge: {{rubric: "Reward a tool call that answers.", base_url: "{url}",
                      model: judge-m, cache: false}}
    alert: {{metric: pass_rate, floor: 0.8, consecutive: 2, min_samples: 5,
             webhook: "{hook}"}}
"""


class _Hook:
    """A webhook receiver on 127.0.0.1 recording each POST's headers and JSON."""

    def __init__(self) -> None:
        self.posts: list[tuple[dict[str, str], dict[str, Any]]] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                hook.posts.append((dict(self.headers), body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)


@pytest.fixture
def hook() -> Iterator[_Hook]:
    receiver = _Hook()
    receiver.thread.start()
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()
    receiver.thread.join()


def _failing(body: dict[str, Any]) -> Reply:
    return Reply('{"score": 1, "reason": "no answer"}', usage=(40, 10))


def test_three_failing_windows_are_one_incident_posted_once(
    in_process: Cli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    openai_server: OpenAIServer,
    hook: _Hook,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    openai_server.responder = _failing
    hours = [window_start(time.time(), "hour") - k * 3600 for k in (4, 3, 2)]
    ids = trace_ids(18)
    with Store(tmp_path / "runs.db") as store:
        for i, trace_id in enumerate(ids):
            add_trace(store, trace_id, hours[i // 6] + 60 + i)
    rules = RULES.format(url=openai_server.base_url, hook=hook.url)
    with served(in_process, monkeypatch, tmp_path, rules) as server:
        server.cycle()
        server.cycle()  # again: the incident is already open and delivered
        body = status(server.url)
        assert status_adds_up(body)["watched"] == {"scored": 18}
        (rule,) = body["rules"]
        assert [w["passed"] for w in rule["windows"]] == [0, 0, 0]
    with served(in_process, monkeypatch, tmp_path, rules) as server:
        server.cycle()  # a restarted server does not send it again
    assert len(hook.posts) == 1
    headers, payload = hook.posts[0]
    first = window_run_name("watched", hours[0], "hour")
    assert headers["Idempotency-Key"] == f"watched/floor/pass_rate/{first.split('/')[-1]}"
    assert (payload["rule"], payload["kind"], payload["floor"]) == ("watched", "floor", 0.8)
    assert [w["run"] for w in payload["windows"]][:2] == [
        window_run_name("watched", start, "hour") for start in hours[:2]
    ]
    assert all(w["high"] < 0.8 for w in payload["windows"])
