"""What an upload may weigh, through a real server on 127.0.0.1: objects and arrays are counted
before decoding (413), nesting and non-finite numbers are refused naming the field (422), the
header's fields have lengths, the spool has limits per token and in all, and only a few upload
requests are decoded at once (503 with Retry-After)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from tests.push.helpers import make_run
from tests.server.conftest import AppFactory
from tests.support.server import LiveServer

from aieval.push import MAX_JSON_ITEMS, run_in, sample_in
from aieval.server import _uploads
from aieval.store import Store

ADMIN = "bounds-admin-token-0123456789abcdef"
TEAMS = {"team-a": "team-a-token-0123456789abcdef", "team-b": "team-b-token-0123456789abcdef"}


@pytest.fixture
def app(make_app: AppFactory) -> FastAPI:
    return make_app(token=ADMIN, upload_tokens=TEAMS)


@pytest.fixture
def server(app: FastAPI) -> Iterator[LiveServer]:
    with LiveServer(app) as live:
        yield live


@pytest.fixture
def local(tmp_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A local run's header and samples, as an upload sends them."""
    src = tmp_path / "local.db"
    run_id = make_run(src, "qa", 2)
    with Store(src) as store:
        return run_in(store.get_run(run_id)), [sample_in(s) for s in store.stored_samples(run_id)]


def _post(url: str, body: dict[str, Any] | str, token: str = ADMIN) -> httpx.Response:
    content = body if isinstance(body, str) else json.dumps(body)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    return httpx.post(f"{url}/api/runs/import", content=content, headers=headers, timeout=60)


def _commit_text(run: dict[str, Any], config: str) -> str:
    header = json.dumps({**run, "config": {}}).replace('"config": {}', f'"config": {config}')
    return f'{{"version": 1, "upload": "{uuid.uuid4().hex}", "parts": 0, "run": {header}}}'


def _reasons(answer: httpx.Response) -> str:
    return " | ".join(answer.json()["reasons"])


def test_a_body_of_too_many_arrays_is_refused_before_decoding(
    server: LiveServer, local: tuple[dict[str, Any], list[dict[str, Any]]]
) -> None:
    run, _ = local
    many = "[" + ",".join(["[]"] * (MAX_JSON_ITEMS + 1)) + "]"
    answer = _post(server.url, _commit_text(run, '{"x": ' + many + "}"))
    assert answer.status_code == 413, answer.text
    assert f"{MAX_JSON_ITEMS} at most" in answer.text
    assert (
        httpx.get(
            f"{server.url}/api/runs", headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60
        ).json()["total"]
        == 0
    )


def test_brackets_inside_strings_are_not_counted(
    server: LiveServer, local: tuple[dict[str, Any], list[dict[str, Any]]]
) -> None:
    _, samples = local
    samples[0]["input"] = json.dumps({"q": "[{" * (MAX_JSON_ITEMS // 2 + 1)})
    part = {"version": 1, "upload": uuid.uuid4().hex, "part": 0, "samples": samples}
    assert _post(server.url, part).status_code == 200


DEEP = {
    "arrays-100000": "[" * 100_000 + "]" * 100_000,
    "objects-5000": '{"a":' * 5000 + "1" + "}" * 5000,
    "arrays-250": "[" * 250 + "]" * 250,
}


@pytest.mark.parametrize("deep", DEEP.values(), ids=DEEP.keys())
def test_a_deep_config_is_a_422(
    server: LiveServer, local: tuple[dict[str, Any], list[dict[str, Any]]], deep: str
) -> None:
    run, _ = local
    answer = _post(server.url, _commit_text(run, '{"x": ' + deep + "}"))
    assert answer.status_code == 422, answer.text
    assert "nest more than 200 levels" in _reasons(answer)
    assert _reasons(answer).startswith("run.config.x"), _reasons(answer)


def test_a_deep_json_text_is_a_422_naming_the_column(
    server: LiveServer, local: tuple[dict[str, Any], list[dict[str, Any]]]
) -> None:
    _, samples = local
    samples[1]["expected"] = "[" * 5000 + "]" * 5000
    part = {"version": 1, "upload": uuid.uuid4().hex, "part": 0, "samples": samples}
    answer = _post(server.url, part)
    assert answer.status_code == 422, answer.text
    assert "samples.1.expected" in _reasons(answer)


def _score(sample: dict[str, Any], **change: Any) -> None:
    sample["scores"][0].update(change)


NON_FINITE = {
    "input-nan": (lambda s: s.update(input='{"q": NaN}'), "samples.0.input"),
    "metadata-inf": (lambda s: s.update(metadata='{"m": 1e400}'), "samples.0.metadata"),
    "extra-neg-inf": (lambda s: s.update(extra='{"e": -Infinity}'), "samples.0.extra"),
    "raw-nan": (lambda s: _score(s, raw="NaN"), "samples.0.scores.0.raw"),
    "score-above-1": (lambda s: _score(s, value=1.5), "samples.0.scores.0.value"),
    "score-1e308": (lambda s: _score(s, value=1e308), "samples.0.scores.0.value"),
    "cost-1e308": (lambda s: s.update(cost=1e308), "samples.0.cost"),
    "latency-negative": (lambda s: s.update(latency_s=-1.0), "samples.0.latency_s"),
}


@pytest.mark.parametrize(("change", "field"), NON_FINITE.values(), ids=NON_FINITE.keys())
def test_a_number_out_of_range_anywhere_is_a_422_naming_the_field(
    server: LiveServer,
    local: tuple[dict[str, Any], list[dict[str, Any]]],
    change: Any,
    field: str,
) -> None:
    _, samples = local
    change(samples[0])
    part = {"version": 1, "upload": uuid.uuid4().hex, "part": 0, "samples": samples}
    answer = _post(server.url, part)
    assert answer.status_code == 422, answer.text
    assert field in _reasons(answer)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e400"])
def test_a_non_finite_number_in_the_config_is_a_422(
    server: LiveServer, local: tuple[dict[str, Any], list[dict[str, Any]]], number: str
) -> None:
    run, _ = local
    answer = _post(server.url, _commit_text(run, '{"t": {"x": [1, ' + number + "]}}"))
    assert answer.status_code == 422, answer.text
    assert "run.config.t.x.1: Input should be a finite number" in _reasons(answer)


HEADERS = {
    "model": (lambda r: r.update(model="m" * 1001), "run.model"),
    "name": (lambda r: r.update(name="n" * 1001), "run.name"),
    "git_sha": (lambda r: r.update(git_sha="0" * 1001), "run.git_sha"),
    "error": (lambda r: r.update(error="e" * 100_001), "run.error"),
    "config": (lambda r: r.update(config={"big": "x" * 1_100_000}), "run.config"),
    "metrics": (lambda r: r.update(metrics={"big": ["x" * 100] * 11_000}), "run.metrics"),
    # small arrays are what makes a header costly to decode in the runs list
    "config-arrays": (lambda r: r.update(config={"a": [[]] * 22_000}), "run.config"),
    "metrics-keys": (lambda r: r.update(metrics={f"k{i}": 0 for i in range(8_000)}), "run.metrics"),
}


@pytest.mark.parametrize(("change", "field"), HEADERS.values(), ids=HEADERS.keys())
@pytest.mark.slow
def test_a_header_field_over_its_length_is_a_422_naming_it(
    server: LiveServer,
    local: tuple[dict[str, Any], list[dict[str, Any]]],
    change: Any,
    field: str,
) -> None:
    run, _ = local
    change(run)
    commit = {"version": 1, "upload": uuid.uuid4().hex, "parts": 0, "run": run}
    answer = _post(server.url, commit)
    assert answer.status_code == 422, answer.text
    assert f"{field}: " in _reasons(answer)


def _open(url: str, samples: list[dict[str, Any]], token: str) -> httpx.Response:
    part = {"version": 1, "upload": uuid.uuid4().hex, "part": 0, "samples": samples}
    return _post(url, part, token)


def test_one_token_cannot_take_every_open_upload(
    server: LiveServer, local: tuple[dict[str, Any], list[dict[str, Any]]]
) -> None:
    _, samples = local
    b = TEAMS["team-b"]
    for _ in range(_uploads.MAX_OPEN_PER_TOKEN):
        assert _open(server.url, samples, b).status_code == 200
    refused = _open(server.url, samples, b)
    assert refused.status_code == 429, refused.text
    assert "this token has" in refused.text and refused.headers["retry-after"]
    assert _open(server.url, samples, TEAMS["team-a"]).status_code == 200
    assert _open(server.url, samples, ADMIN).status_code == 200


def test_the_spool_keeps_parts_compact_and_bounds_each_tokens_bytes(
    app: FastAPI,
    server: LiveServer,
    local: tuple[dict[str, Any], list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, samples = local
    part = {"version": 1, "upload": uuid.uuid4().hex, "part": 0, "samples": samples}
    padded = json.dumps(part, indent=500)
    assert _post(server.url, padded).status_code == 200
    spool: Path = app.state.uploads.folder
    kept = sum(p.stat().st_size for p in spool.rglob("part-*.json"))
    assert kept < len(json.dumps(part)) < len(padded)

    monkeypatch.setattr(_uploads, "MAX_SPOOL_BYTES_PER_TOKEN", 3 * kept)
    a = TEAMS["team-a"]
    for _ in range(3):
        assert _open(server.url, samples, a).status_code == 200
    refused = _open(server.url, samples, a)
    assert refused.status_code == 429, refused.text
    assert "would hold more than" in refused.text
    assert _open(server.url, samples, TEAMS["team-b"]).status_code == 200

    monkeypatch.setattr(_uploads, "MAX_SPOOL_BYTES", 5 * kept)  # five parts are held
    full = _open(server.url, samples, TEAMS["team-b"])
    assert full.status_code == 503, full.text
    assert full.headers["retry-after"]


def test_only_a_few_upload_requests_are_decoded_at_once(
    app: FastAPI, server: LiveServer, local: tuple[dict[str, Any], list[dict[str, Any]]]
) -> None:
    _, samples = local
    busy = app.state.uploads.busy
    for _ in range(_uploads.MAX_BUSY):  # every slot taken, as by uploads being decoded
        assert busy.acquire(blocking=False)
    try:
        answer = _open(server.url, samples, ADMIN)
        assert answer.status_code == 503, answer.text
        assert answer.headers["retry-after"] == str(_uploads.RETRY_AFTER_S)
    finally:
        for _ in range(_uploads.MAX_BUSY):
            busy.release()
    assert _open(server.url, samples, ADMIN).status_code == 200
