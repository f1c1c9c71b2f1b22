"""Alert delivery retried on its schedule (5 s doubling to an hour apart, for 24 hours), each
failure logged once, then abandoned and kept; one pass makes one POST per due incident, several
at once, so one incident's hanging webhook never delays another's (real receivers on
127.0.0.1)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from aieval import Store
from aieval.online import (
    MAX_PAUSE_S,
    RETRY_FOR_S,
    AlertPolicy,
    AlertSender,
    OnlineRule,
    retry_pause,
)
from aieval.online._delivery import AlertDelivery

T0 = 1_780_000_000.0


@dataclass
class Hook:
    """A webhook answering ``status`` to every POST, after ``release`` is set."""

    status: int
    url: str = ""
    posts: int = 0
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


def serve(hook: Hook) -> Iterator[Hook]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            hook.posts += 1
            hook.arrived.set()
            hook.release.wait(30)
            self.send_response(hook.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    hook.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield hook
    hook.release.set()
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def down() -> Iterator[Hook]:
    hook = Hook(503)
    hook.release.set()
    yield from serve(hook)


@pytest.fixture
def hanging() -> Iterator[Hook]:
    yield from serve(Hook(200))


@pytest.fixture
def up() -> Iterator[Hook]:
    hook = Hook(200)
    hook.release.set()
    yield from serve(hook)


def rule(name: str, hook: Hook) -> OnlineRule:
    return OnlineRule(name=name, alert=AlertPolicy(webhook=hook.url, floor=0.8))


def test_retried_on_the_schedule_for_a_day_then_abandoned_and_kept(
    down: Hook, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store(tmp_path / "runs.db")
    store.open_alert("qa", "floor/pass_rate/x", "floor", {"rule": "qa"}, T0)
    clock = [T0]
    sender = AlertSender(store, clock=lambda: clock[0])
    pauses: list[float] = []
    with caplog.at_level(logging.WARNING, logger="aieval"):
        while True:
            sender.deliver(rule("qa", down))
            (stored,) = store.online_alerts("qa")
            if stored.next_attempt_at is None:
                break
            pauses.append(stored.next_attempt_at - clock[0])
            sender.deliver(rule("qa", down))  # not due before its time: no POST
            assert down.posts == len(pauses)
            clock[0] = stored.next_attempt_at
    assert pauses == [retry_pause(n) for n in range(1, len(pauses) + 1)]
    assert pauses[:4] == [5.0, 10.0, 20.0, 40.0] and max(pauses) == MAX_PAUSE_S
    assert RETRY_FOR_S - MAX_PAUSE_S < clock[0] - T0 <= RETRY_FOR_S  # retried for a day
    assert stored.abandoned_at == clock[0] and stored.delivered_at is None
    assert stored.attempts == down.posts == len(pauses) + 1
    assert stored.last_error is not None and "503" in stored.last_error
    failures = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(failures) == down.posts  # each failed attempt logged once
    assert all("'qa'" in m and "floor/pass_rate/x" in m and "503" in m for m in failures)
    assert "given up" in failures[-1]
    clock[0] += 10 * RETRY_FOR_S
    sender.deliver(rule("qa", down))  # abandoned: never POSTed again, never dropped
    assert down.posts == stored.attempts and store.online_alerts("qa", undelivered=True)
    store.close()


def test_a_hanging_webhook_never_delays_another_rules_alert(
    hanging: Hook, up: Hook, tmp_path: Any
) -> None:
    store = Store(tmp_path / "runs.db")
    for name in ("a-slow", "b-fast"):
        store.open_alert(name, "floor/pass_rate/x", "floor", {"rule": name}, time.time())
    delivery = AlertDelivery(tmp_path / "runs.db", poll_s=600)
    delivery.start()
    try:
        delivery.wake([rule("a-slow", hanging), rule("b-fast", up)])
        assert hanging.arrived.wait(20)
        # the slow rule's POST is held (its deadline is 10 s): the other's goes at once
        assert up.arrived.wait(5)
        deadline = time.monotonic() + 5
        while store.online_alerts("b-fast")[0].delivered_at is None:
            assert time.monotonic() < deadline, "the fast rule's delivery was not recorded"
            up.release.wait(0.02)
        assert store.online_alerts("a-slow")[0].delivered_at is None
    finally:
        hanging.release.set()
        delivery.stop()
    assert store.online_alerts("a-slow")[0].delivered_at is not None
    store.close()


def test_a_pass_leases_at_most_its_share_of_a_rules_backlog(up: Hook, tmp_path: Any) -> None:
    store = Store(tmp_path / "runs.db")
    for i in range(6):
        store.open_alert("qa", f"floor/pass_rate/{i}", "floor", {"rule": "qa"}, T0 + i)
    sender = AlertSender(store, clock=lambda: T0 + 60)
    leased = sender.due(rule("qa", up), limit=4)
    assert [a.incident for a in leased] == [f"floor/pass_rate/{i}" for i in range(4)]
    assert [a.attempts for a in store.online_alerts("qa")] == [1, 1, 1, 1, 0, 0]
    # the rest are left for the next pass, free for any sender
    assert [a.incident for a in sender.due(rule("qa", up))] == [
        "floor/pass_rate/4",
        "floor/pass_rate/5",
    ]
    store.close()
