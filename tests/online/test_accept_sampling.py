"""Issue 44's acceptance: sampling by trace id. Two rules on the same traffic, sent by the
OpenTelemetry SDK to ``aieval serve --online``: each scores exactly the traces ``sampled``
keeps at its rate, and those of the lower rate are a subset of the higher's; over 10,000
random trace ids, every rate's set is a subset of the next and its size within its binomial
bound."""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path

import pytest
from tests.online.accept_support import export_traces, served, status, status_adds_up
from tests.support.cli import Cli

from aieval import Store
from aieval.online import sampled

RULES = """\
rules:
  - name: low
    filter: {service_name: shop}
    sampling_rate: 0.2
    settle_s: 0
    scoring: {profile: agent}
  - name: high
    filter: {service_name: shop}
    sampling_rate: 0.5
    settle_s: 0
    scoring: {profile: agent}
"""


@pytest.mark.slow
def test_two_rates_on_the_same_traffic_score_nested_sets(
    in_process: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with served(in_process, monkeypatch, tmp_path, RULES) as server:
        ids = export_traces(server.url, 200)
        export_traces(server.url, 5, service="other")  # matched by neither rule
        server.cycle()
        final = status_adds_up(status(server.url))
    store = Store(server.db)
    scored = {
        rule: {w.trace_id for w in store.online_work(rule) if w.state == "scored"}
        for rule in ("low", "high")
    }
    for rule, rate in (("low", 0.2), ("high", 0.5)):
        work = store.online_work(rule)
        assert sorted(w.trace_id for w in work) == sorted(ids)  # every match once
        assert scored[rule] == {t for t in ids if sampled(t, rate)}
        assert final[rule] == {"scored": len(scored[rule]), "sampled_out": 200 - len(scored[rule])}
    assert scored["low"] < scored["high"]
    assert 0 < len(scored["low"]) < len(scored["high"]) < 200


def test_ten_thousand_ids_nest_across_rates_within_their_binomial_bounds() -> None:
    rng = random.Random(44)
    ids = [f"{rng.getrandbits(128):032x}" for _ in range(10_000)]
    rates = (0.01, 0.05, 0.2, 0.5, 0.9, 1.0)
    kept = {rate: {t for t in ids if sampled(t, rate)} for rate in rates}
    for lower, higher in itertools.pairwise(rates):
        assert kept[lower] <= kept[higher]
    for rate in rates:
        n, expected = len(ids), len(ids) * rate
        bound = 5 * math.sqrt(n * rate * (1 - rate))  # five standard deviations
        assert abs(len(kept[rate]) - expected) <= bound, (rate, len(kept[rate]))
        assert kept[rate] == {t for t in ids if sampled(t, rate)}  # the same every time
    assert kept[1.0] == set(ids)
