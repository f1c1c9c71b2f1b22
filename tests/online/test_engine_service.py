"""Online scoring as a server runs it: a thread that cycles when woken, idle without rules,
started and stopped with ``aieval serve``'s app; spans sent by the OpenTelemetry SDK's own
exporter to a real server on loopback are scored by its service."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import httpx
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from tests.support.online import add_trace, put_rule, scored_rule, trace_ids
from tests.support.server import LiveServer

from aieval import Store
from aieval.online import OnlineService, TraceFilter
from aieval.server import ServerSettings, create_app

TOKEN = "online-engine-token-0123456789"


def test_the_service_scores_when_woken_and_is_idle_without_rules(store_location: str) -> None:
    store = Store(store_location)
    ids = trace_ids(3)
    for trace_id in ids:
        add_trace(store, trace_id, 1000.0)
    service = OnlineService(store_location, worker_id="s", poll_s=600)
    service.start()
    try:
        assert service.cycle_now(timeout=60)
        assert store.online_work() == []  # no rule: nothing examined
        put_rule(store, scored_rule(settle_s=0))
        assert service.cycle_now(timeout=60)
        assert Counter(w.state for w in store.online_work()) == {"scored": 3}
    finally:
        service.stop()
    assert service._thread is not None and not service._thread.is_alive()


def test_a_server_scores_the_spans_an_sdk_exporter_sends_it(
    store_location: str, tmp_path: Path
) -> None:
    store = Store(store_location)
    put_rule(store, scored_rule(settle_s=0, filter=TraceFilter(service_name="support-app")))
    app = create_app(store_location, ServerSettings(token=TOKEN, dataset_roots=(tmp_path,)))
    try:
        with LiveServer(app) as live:
            provider = TracerProvider(resource=Resource.create({"service.name": "support-app"}))
            exporter = OTLPSpanExporter(
                endpoint=f"{live.url}/v1/traces", headers={"Authorization": f"Bearer {TOKEN}"}
            )
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            tracer = provider.get_tracer("test")
            for _ in range(4):
                with (
                    tracer.start_as_current_span("app"),
                    tracer.start_as_current_span(
                        "execute_tool get_order", attributes={"gen_ai.tool.name": "get_order"}
                    ),
                ):
                    pass
            provider.shutdown()
            listed = httpx.get(
                f"{live.url}/api/traces", headers={"Authorization": f"Bearer {TOKEN}"}
            ).json()["traces"]
            assert len(listed) == 4
            service: OnlineService = app.state.online
            assert service.cycle_now(timeout=60)
    finally:
        app.state.manager.shutdown()
    work = store.online_work("support")
    assert sorted(w.trace_id for w in work) == sorted(t["trace_id"] for t in listed)
    assert Counter(w.state for w in work) == {"scored": 4}
