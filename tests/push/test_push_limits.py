"""Uploads at the edge of their limits, through a real server on 127.0.0.1: numbers beyond the
store's integer range and tens of thousands of names are refused (or taken) quickly, naming
the field."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.push.helpers import make_run
from tests.server.conftest import AppFactory
from tests.support.server import LiveServer

from aieval.push import sample_in
from aieval.store import Store

TOKEN = "limits-test-token-0123456789abcdef"


@pytest.fixture
def server(make_app: AppFactory) -> Iterator[LiveServer]:
    with LiveServer(make_app(token=TOKEN)) as live:
        yield live


def _part(source: Path, run_id: str) -> dict[str, Any]:
    with Store(source) as store:
        samples = [sample_in(s) for s in store.stored_samples(run_id)]
    return {"version": 1, "upload": uuid.uuid4().hex, "part": 0, "samples": samples}


def _post(url: str, body: dict[str, Any]) -> httpx.Response:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    # httpx's 5 s default is a wall clock a busy machine outlasts; what is slow is checked apart
    return httpx.post(
        f"{url}/api/runs/import", content=json.dumps(body), headers=headers, timeout=120
    )


BEYOND = {
    "tokens": (lambda s: s.update(input_tokens=2**64), "samples.0.input_tokens"),
    "idx": (lambda s: s.update(idx=2**63), "samples.0.idx"),
    "retries": (lambda s: s.update(retries=2**70), "samples.0.retries"),
    "call-tokens": (
        lambda s: s["calls"].append(
            {
                "purpose": "target",
                "provider": None,
                "model": None,
                "latency_s": None,
                "input_tokens": None,
                "output_tokens": 2**63,
                "cost": None,
                "retries": 0,
                "cached": 0,
                "error": None,
            }
        ),
        "samples.0.calls.0.output_tokens",
    ),
}


@pytest.mark.parametrize(("change", "field"), BEYOND.values(), ids=BEYOND.keys())
def test_a_number_beyond_the_store_range_is_a_422_naming_the_field(
    server: LiveServer, tmp_path: Path, change: Any, field: str
) -> None:
    src = tmp_path / "local.db"
    body = _part(src, make_run(src, "qa", 1))
    change(body["samples"][0])
    answer = _post(server.url, body)
    assert answer.status_code == 422, answer.text
    assert any(r.startswith(f"{field}: ") for r in answer.json()["reasons"]), answer.json()


def test_the_largest_stored_integer_is_taken(server: LiveServer, tmp_path: Path) -> None:
    src = tmp_path / "local.db"
    body = _part(src, make_run(src, "qa", 1))
    body["samples"][0]["input_tokens"] = 2**63 - 1
    assert _post(server.url, body).status_code == 200


@pytest.mark.parametrize("repeated", [False, True], ids=["distinct", "last-repeated"])
def test_tens_of_thousands_of_scorer_names_are_checked_in_one_pass(
    server: LiveServer, tmp_path: Path, repeated: bool
) -> None:
    src = tmp_path / "local.db"
    body = _part(src, make_run(src, "qa", 1))
    score = dict.fromkeys(("raw", "reason", "error", "metadata", "unreadable"), None)
    names = [f"scorer-{k}" for k in range(24_000)]
    if repeated:
        names[-1] = names[-2]
    body["samples"][0]["scores"] = [{**score, "scorer": n, "value": 1.0} for n in names]
    # CPU time of this process (the server answers in a thread of it): a busy machine
    # stretches the wall clock, not the work
    started = time.process_time()
    answer = _post(server.url, body)
    elapsed = time.process_time() - started
    # a check comparing each name with every other took 7 to 13 s for these 24,000
    assert elapsed < 5, elapsed
    if repeated:
        assert answer.status_code == 422
        assert "scorer 'scorer-23998' given twice" in answer.text
    else:
        assert answer.status_code == 200, answer.text


@pytest.mark.parametrize(
    ("field", "value"),
    [("cost", -0.5), ("latency_s", -1.0), ("input_tokens", -1), ("retries", 2**70), ("cached", 2)],
)
def test_a_sample_and_each_call_refuse_the_same_bad_usage_figure(field: str, value: Any) -> None:
    """What a sample and a model call cost is checked alike on both rows, naming the field."""
    from pydantic import ValidationError

    from aieval.push import SampleIn

    usage = {"latency_s": None, "input_tokens": None, "output_tokens": None, "cost": None,
             "retries": 0, "cached": 0}  # fmt: skip
    call = {"purpose": "target", "provider": None, "model": None, "error": None, **usage}
    sample = {
        "sample_id": "s1", "idx": 0, "input": None, "expected": None, "prediction": None,
        "metadata": None, "error": None, "passed": None, "extra": None, "created_at": 1.0,
        "verdict": None, **usage, "calls": [call],
    }  # fmt: skip
    assert SampleIn.model_validate(sample).stored().calls[0].purpose == "target"
    on_sample = ({**sample, field: value}, (field,))
    on_call = ({**sample, "calls": [{**call, field: value}]}, ("calls", 0, field))
    for bad, where in (on_sample, on_call):
        with pytest.raises(ValidationError) as caught:
            SampleIn.model_validate(bad)
        assert [e["loc"] for e in caught.value.errors()] == [where]
