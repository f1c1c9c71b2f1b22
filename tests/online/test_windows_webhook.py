"""Alerts delivered to a real webhook receiver on 127.0.0.1: one POST per incident across
repeated checks, restarts and two senders on one store; retried on its schedule; redirects never
followed; the payload holds ids and figures only."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

import pytest
from tests.online.windows_support import HOUR, T0, add_window
from tests.support.online import add_trace, put_rule, scored_rule, trace_ids

from aieval import Store
from aieval.online import (
    AlertPolicy,
    AlertSender,
    OnlineRule,
    OnlineService,
    check_alerts,
    window_start,
)
from aieval.online._alerts import idempotency_key


@dataclass
class Receiver:
    """What the webhook saw; ``statuses`` answers the next POSTs (then 200); ``hold`` keeps a
    POST unanswered until set."""

    url: str = ""
    posts: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    hold: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    seen = Receiver()
    seen.hold.set()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.posts.append((self.path, dict(self.headers), body))
            seen.arrived.set()
            assert seen.hold.wait(30)
            status = seen.statuses.pop(0) if seen.statuses else 200
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", seen.url + "/moved")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    seen.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield seen
    seen.hold.set()
    server.shutdown()
    server.server_close()
    thread.join()


def rule_for(receiver: Receiver, **policy: Any) -> OnlineRule:
    options: dict[str, Any] = {"floor": 0.8, "consecutive": 2, "min_samples": 5}
    alert = AlertPolicy(webhook=receiver.url + "/hook", **{**options, **policy})
    return OnlineRule(name="qa", alert=alert)


def bad_windows(store: Store, n: int = 3) -> list[str]:
    return [add_window(store, "qa", T0 + i * HOUR, [False] * 6) for i in range(n)]


def quick(store: Store, **options: Any) -> AlertSender:
    return AlertSender(store, timeout_s=10, backoff_s=0.0, **options)


def test_one_alert_per_incident_across_checks_and_restarts(
    receiver: Receiver, store_location: str
) -> None:
    store = Store(store_location)
    runs = bad_windows(store)
    rule = rule_for(receiver)
    now = T0 + 4 * HOUR
    opened = check_alerts(store, rule, now, quick(store))
    assert [i.key for i in opened] == [f"floor/pass_rate/{opened[0].windows[0].label}"]
    assert check_alerts(store, rule, now, quick(store)) == []
    again = Store(store_location)  # a restart: a new connection, the same store
    assert check_alerts(again, rule, now + HOUR, quick(again)) == []
    assert len(receiver.posts) == 1
    path, headers, body = receiver.posts[0]
    assert path == "/hook"
    assert headers["Idempotency-Key"] == f"qa/{opened[0].key}"
    assert body["rule"] == "qa" and body["kind"] == "floor" and body["incident"] == opened[0].key
    assert [w["run_id"] for w in body["windows"]] == runs
    assert [w["run"] for w in body["windows"]] == [store.get_run(r).name for r in runs]
    assert body["windows"][0]["estimate"] == 0.0 and body["windows"][0]["scored"] == 6
    (stored,) = again.online_alerts("qa")
    assert stored.delivered_at is not None and stored.attempts == 1 and stored.last_error is None
    store.close()
    again.close()


def test_two_senders_on_one_store_deliver_once(receiver: Receiver, store_location: str) -> None:
    first, second = Store(store_location), Store(store_location)
    bad_windows(first)
    rule = rule_for(receiver)
    receiver.hold.clear()  # the first sender's POST waits, its lease held
    outcome: list[Any] = []
    worker = threading.Thread(
        target=lambda: outcome.append(check_alerts(first, rule, T0 + 4 * HOUR, quick(first)))
    )
    worker.start()
    assert receiver.arrived.wait(30)
    # the second server finds the incident stored and its delivery under way: no second POST
    assert check_alerts(second, rule, T0 + 4 * HOUR, quick(second)) == []
    receiver.hold.set()
    worker.join(30)
    assert len(outcome[0]) == 1 and len(receiver.posts) == 1
    assert second.online_alerts("qa")[0].delivered_at is not None
    first.close()
    second.close()


def test_a_receiver_failing_twice_gets_it_on_the_third_post(
    receiver: Receiver, tmp_path: Any
) -> None:
    store = Store(tmp_path / "runs.db")
    bad_windows(store)
    receiver.statuses = [503, 502]
    clock = [T0 + 4 * HOUR]
    sender = AlertSender(store, backoff_s=0.5, clock=lambda: clock[0])
    rule = rule_for(receiver)
    check_alerts(store, rule, T0 + 4 * HOUR, sender)
    assert len(receiver.posts) == 1  # one POST per pass: no pause in line
    assert store.online_alerts("qa")[0].next_attempt_at == clock[0] + 0.5
    sender.deliver(rule)  # not due yet
    assert len(receiver.posts) == 1
    clock[0] += 0.5
    sender.deliver(rule)
    assert store.online_alerts("qa")[0].next_attempt_at == clock[0] + 1.0
    clock[0] += 1.0
    sender.deliver(rule)
    assert len(receiver.posts) == 3
    assert len({h["Idempotency-Key"] for _, h, _ in receiver.posts}) == 1
    (stored,) = store.online_alerts("qa")
    assert stored.attempts == 3 and stored.delivered_at is not None and stored.last_error is None
    store.close()


def test_an_undelivered_alert_is_tried_again_next_pass(receiver: Receiver, tmp_path: Any) -> None:
    store = Store(tmp_path / "runs.db")
    bad_windows(store)
    receiver.statuses = [500, 500]
    rule = rule_for(receiver)
    check_alerts(store, rule, T0 + 4 * HOUR, quick(store))
    (stored,) = store.online_alerts("qa")
    assert stored.delivered_at is None and stored.attempts == 1
    assert stored.last_error is not None and "500" in stored.last_error
    check_alerts(store, rule, T0 + 4 * HOUR, quick(store))
    check_alerts(store, rule, T0 + 4 * HOUR, quick(store))
    (stored,) = store.online_alerts("qa")
    assert stored.delivered_at is not None and stored.attempts == 3 and len(receiver.posts) == 3
    store.close()


def test_a_redirect_is_not_followed(receiver: Receiver, tmp_path: Any) -> None:
    store = Store(tmp_path / "runs.db")
    bad_windows(store)
    receiver.statuses = [307]
    check_alerts(store, rule_for(receiver), T0 + 4 * HOUR, quick(store))
    assert [path for path, _, _ in receiver.posts] == ["/hook"]
    (stored,) = store.online_alerts("qa")
    assert stored.delivered_at is None and stored.attempts == 1
    assert stored.last_error is not None and "not followed" in stored.last_error
    store.close()


def test_a_streak_longer_than_the_lookback_keeps_its_key(receiver: Receiver, tmp_path: Any) -> None:
    store = Store(tmp_path / "runs.db")
    bad_windows(store)  # hours 0-2
    rule = rule_for(receiver)
    (opened,) = check_alerts(store, rule, T0 + 4 * HOUR, quick(store))
    # two quiet days (no window, or too few samples to count: the streak is not broken), then
    # more bad hours: the check reads back past its 48 windows to the streak's start, so it is
    # the same incident
    add_window(store, "qa", T0 + 10 * HOUR, [True, False])
    for hour in (50, 51):
        add_window(store, "qa", T0 + hour * HOUR, [False] * 6)
    assert check_alerts(store, rule, T0 + 53 * HOUR, quick(store)) == []
    assert [a.incident for a in store.online_alerts("qa")] == [opened.key]
    assert len(receiver.posts) == 1
    store.close()


def test_a_rule_name_beyond_latin_1_is_delivered_percent_encoded(
    receiver: Receiver, tmp_path: Any
) -> None:
    store = Store(tmp_path / "runs.db")
    for i in range(3):
        add_window(store, "质量", T0 + i * HOUR, [False] * 6)
    rule = OnlineRule(name="质量", alert=rule_for(receiver).alert)
    (opened,) = check_alerts(store, rule, T0 + 4 * HOUR, quick(store))
    ((_, headers, body),) = receiver.posts
    assert headers["Idempotency-Key"] == idempotency_key("质量", opened.key)
    assert unquote(headers["Idempotency-Key"]) == f"质量/{opened.key}" and body["rule"] == "质量"
    (stored,) = store.online_alerts("质量")
    assert stored.delivered_at is not None and stored.last_error is None
    store.close()


def test_any_failure_of_a_post_is_counted_with_its_error(tmp_path: Any) -> None:
    store = Store(tmp_path / "runs.db")
    bad_windows(store)
    # a port out of range: urlsplit raises ValueError, neither OSError nor HTTPException
    alert = AlertPolicy(webhook="http://127.0.0.1:99999/hook", floor=0.8, consecutive=2)
    rule = OnlineRule(name="qa", alert=AlertPolicy(**{**vars_of(alert), "min_samples": 5}))
    check_alerts(store, rule, T0 + 4 * HOUR, quick(store))
    (stored,) = store.online_alerts("qa")
    assert stored.delivered_at is None and stored.attempts == 1
    assert stored.last_error is not None and "ValueError" in stored.last_error
    store.close()


def vars_of(policy: AlertPolicy) -> dict[str, Any]:
    return {f.name: getattr(policy, f.name) for f in fields(policy)}


@pytest.fixture
def trickler() -> Iterator[str]:
    """A webhook that answers a header line every 0.2 s, for up to a minute."""
    done = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            for i in range(300):
                if done.wait(0.2):
                    return
                try:
                    conn.sendall(f"X-Slow-{i}: 1\r\n".encode())
                except OSError:
                    return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
    done.set()
    listener.close()
    thread.join(10)


def test_a_trickling_receiver_is_cut_at_the_posts_deadline(trickler: str, tmp_path: Any) -> None:
    store = Store(tmp_path / "runs.db")
    bad_windows(store)
    rule = OnlineRule(
        name="qa", alert=AlertPolicy(webhook=trickler, floor=0.8, consecutive=2, min_samples=5)
    )
    sender = AlertSender(store, timeout_s=1.0)
    assert sender.lease_s > sender.timeout_s + 10  # the deadline ends well inside the lease
    began = time.monotonic()
    check_alerts(store, rule, T0 + 4 * HOUR, sender)
    # each header line came within the 1 s socket timeout: only a total deadline ends it
    assert time.monotonic() - began < 5
    (stored,) = store.online_alerts("qa")
    assert stored.delivered_at is None and stored.attempts == 1
    assert stored.last_error is not None and "deadline" in stored.last_error
    store.close()


def test_scoring_goes_on_while_a_webhook_hangs(receiver: Receiver, store_location: str) -> None:
    store = Store(store_location)
    hour = window_start(time.time(), "hour")
    for back in (3, 2):  # two closed bad windows of the rule before this hour: an incident
        add_window(store, "support", hour - back * HOUR, [False] * 6)
    alert = AlertPolicy(webhook=receiver.url + "/hook", floor=0.8, consecutive=2, min_samples=5)
    put_rule(store, scored_rule(settle_s=0, alert=alert))
    receiver.hold.clear()  # the webhook takes the POST and never answers (until the end)
    service = OnlineService(store_location, worker_id="s", poll_s=600)
    service.start()
    try:
        assert service.cycle_now(timeout=20)
        assert receiver.arrived.wait(20)
        for trace_id in trace_ids(3):
            add_trace(store, trace_id, time.time() - 1)
        # the POST is still held: the next cycle scores the traces all the same
        assert service.cycle_now(timeout=20)
        assert Counter(w.state for w in store.online_work("support")) == {"scored": 3}
        assert len(receiver.posts) == 1 and store.online_alerts("support")[0].delivered_at is None
    finally:
        receiver.hold.set()
        service.stop()
    assert service.alerts._thread is not None and not service.alerts._thread.is_alive()
    (stored,) = store.online_alerts("support")
    assert stored.delivered_at is not None and stored.attempts == 1
    store.close()
