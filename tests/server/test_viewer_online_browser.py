"""The viewer's Online page in real Chromium, on a seeded store: each rule's windows with the
counts (matched = scored + skipped by reason + pending + claimed), the pass rate with its
interval, the spend, the errors and a stalled rule's reason; a window links to its run page."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.support.browser import require_chromium

require_chromium()

from tests.support.online import add_trace, trace_ids  # noqa: E402
from tests.support.online_status_rows import (  # noqa: E402
    add_rule,
    add_spend,
    add_window_run,
    add_work,
)
from tests.support.server import LiveServer  # noqa: E402

import aieval.server as server_api  # noqa: E402
from aieval.online import window_run_name, window_start  # noqa: E402
from aieval.store import Store  # noqa: E402


def _cells(page: Any, rule: str, window: str) -> dict[str, str]:
    row = page.locator(f'section[data-rule="{rule}"] tr[data-window="{window}"]')
    fields = row.locator("td[data-field]")
    return {
        fields.nth(i).get_attribute("data-field"): fields.nth(i).inner_text()
        for i in range(fields.count())
    }


def test_the_online_page_shows_each_rules_windows_and_skips(page: Any, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    now = time.time()
    start = window_start(now, "hour")
    earlier = start - 3600
    with Store(db) as store:
        add_rule(store, "support", {"name": "support", "budget": {"calls_per_hour": 50}})
        add_rule(store, "billing", {"name": "billing"}, source="api")
        run_id = add_window_run(store, "support", earlier, "hour", passed=3, failed=1)
        for i in range(4):
            add_work(store, "support", f"s{i}", window_start=earlier, state="scored")
        for i, reason in enumerate(["sampled_out", "sampled_out", "budget_exhausted"]):
            add_work(
                store, "support", f"k{i}", window_start=earlier, state="skipped", reason=reason
            )
        add_work(
            store,
            "support",
            "e",
            window_start=earlier,
            state="skipped",
            reason="error",
            message="<b>judge</b> timed out",
        )
        add_work(store, "support", "p", window_start=start, state="pending", matched_at=now - 5)
        add_spend(store, "support", "hour", start, calls=12)
        # billing: claimable for an hour, nobody claims it
        add_work(store, "billing", "b", window_start=start, state="pending", matched_at=now - 3600)
        # billing: an incident whose webhook never answered, given up (its error is text)
        store.open_alert("billing", "floor/pass_rate/x", "floor", {}, now - 90000)
        store.lease_alert("billing", "floor/pass_rate/x", now, now + 60)
        store.finish_alert(
            "billing",
            "floor/pass_rate/x",
            delivered_at=None,
            error="POST http://hooks.test/…: <b>refused</b>",
            abandoned_at=now,
        )
        add_trace(store, trace_ids(1)[0], now - 90)  # received, not examined by anyone yet
    # the seeded rows are the state shown: nothing scores them
    settings = server_api.ServerSettings(dataset_roots=(tmp_path,), online_scoring=False)
    app = server_api.create_app(str(db), settings)
    try:
        with LiveServer(app) as live:
            page.goto(f"{live.url}/#/online")
            page.wait_for_selector('section[data-rule="support"]')
            assert page.locator("[data-field=totals]").inner_text() == (
                "10 matched traces: 4 scored, 4 skipped, 2 pending, 0 being scored."
            )
            assert (
                page.locator("[data-field=unexamined]")
                .inner_text()
                .startswith(
                    "1 received traces not yet examined against the rules, the oldest waiting 9"
                )
            )
            name = window_run_name("support", earlier, "hour")
            assert _cells(page, "support", name) == {
                "matched": "8",
                "scored": "4",
                "sampled_out": "2",
                "budget_exhausted": "1",
                "incomplete": "0",
                "error": "1",
                "pending": "0",
                "claimed": "0",
                "pass_rate": "75.0% [30.1%, 95.4%] of 4",
            }
            current = window_run_name("support", start, "hour")
            assert _cells(page, "support", current)["pending"] == "1"
            assert _cells(page, "support", "all")["matched"] == "9"
            support = page.locator('section[data-rule="support"]')
            assert "12 of 50" in support.locator('tr[data-period="hour"]').inner_text()
            # an error message is text, never markup
            assert support.locator(".online-errors li").inner_text() == "1 × <b>judge</b> timed out"
            assert support.locator("[data-field=stalled]").count() == 0
            billing = page.locator('section[data-rule="billing"]')
            assert (
                "no server is claiming its items"
                in billing.locator("[data-field=stalled]").inner_text()
            )
            assert "Alerts not delivered" in billing.locator("[data-field=alerts]").inner_text()
            incident = billing.locator('tr[data-incident="floor/pass_rate/x"]')
            assert incident.get_attribute("data-state") == "abandoned"
            assert incident.locator("[data-field=state]").inner_text() == "abandoned"
            assert incident.locator("[data-field=attempts]").inner_text() == "1"
            assert incident.locator("[data-field=last_error]").inner_text() == (
                "POST http://hooks.test/…: <b>refused</b>"
            )
            assert support.locator("[data-field=alerts]").count() == 0
            # the window is a stored run: its link opens the run page
            page.click(f'section[data-rule="support"] tr[data-window="{name}"] th a')
            page.wait_for_url(f"**/#/runs/{run_id}")
            page.wait_for_selector(f"text={name}")
    finally:
        app.state.manager.shutdown()
