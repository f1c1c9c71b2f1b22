"""Issue 44's acceptance: a trace whose root span never arrives (the SDK exports only its
child) is skipped as ``incomplete`` once ``incomplete_after_s`` passed, with what is missing;
it is never scored, so never a failure; the complete traces beside it are scored."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.online.accept_support import export_traces, served, status, status_adds_up
from tests.support.cli import Cli

from aieval import Store

RULES = """\
rules:
  - name: whole
    filter: {service_name: shop}
    settle_s: 0
    incomplete_after_s: 1
    scoring: {profile: agent}
"""


def test_a_trace_whose_root_never_arrives_is_incomplete_not_a_failure(
    in_process: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with served(in_process, monkeypatch, tmp_path, RULES) as server:
        partial = export_traces(server.url, 3, complete=False)
        whole = export_traces(server.url, 2)
        server.cycle()
        store = Store(server.db)
        first = {w.trace_id: w.state for w in store.online_work("whole")}
        assert {first[t] for t in whole} == {"scored"}
        # never scored: waiting for its spans (or already incomplete on a slow machine)
        assert {first[t] for t in partial} <= {"pending", "skipped"}
        deadline = time.monotonic() + 120
        while True:  # polled: the items become due once incomplete_after_s has passed
            server.cycle()
            final = _final_counts(server.url)
            if final is not None:
                break
            assert time.monotonic() < deadline, status(server.url)
            time.sleep(0.2)
    assert final == {"scored": 2, "incomplete": 3}
    work = {w.trace_id: w for w in store.online_work("whole")}
    for trace_id in partial:
        assert (work[trace_id].state, work[trace_id].reason) == ("skipped", "incomplete")
        assert work[trace_id].message and "parent" in work[trace_id].message
        assert work[trace_id].run_id is None
    runs = {w.run_id for w in work.values() if w.run_id is not None}
    stored = sorted(s.id for run_id in runs for s in store.iter_samples(run_id))
    assert stored == sorted(whole)  # the incomplete ones have no sample: never a failure


def _final_counts(url: str) -> object:
    """The rule's final counts once nothing is pending or claimed; ``None`` before."""
    body = status(url)
    (rule,) = body["rules"]
    if rule["counts"]["pending"] or rule["counts"]["claimed"]:
        return None
    return status_adds_up(body)["whole"]
