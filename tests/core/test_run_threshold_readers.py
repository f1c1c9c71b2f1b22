"""Every reader shows a sample as its run's grader decided it, at the run's own pass threshold:
a new sample (its verdict stored by the runner) and an earlier store's row (its verdict derived
by the store from the stored pass flag and the run's ``pass_threshold``) read the same in the
report, the viewer's sample detail and the telemetry attributes. A record without a verdict
(built by hand) is refused by each of them, never read at a guessed threshold."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from aieval import SampleRecord, ScoreRecord, Store, run
from aieval.core import DEFAULT_PASS_THRESHOLD
from aieval.errors import ConfigError
from aieval.report import build_report, example_numbers
from aieval.server import ServerSettings, create_app
from aieval.server._views import sample_detail, sample_item
from aieval.store._sample_reads import SampleReader
from aieval.telemetry import RunHeader
from aieval.telemetry._attributes import sample_attributes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "stores"
#: the earlier store's run read at 0.8, and its sample whose judge scored 0.6 (token_f1 0.549)
OLD_RUN, OLD_SAMPLE = "plain-v1", "sq-0012"


def sixty(prediction: str, expected: str | None) -> float:
    return 0.6


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """A copy of the earlier store whose ``plain-v1`` ran at 0.8, with a new run at 0.8."""
    path = tmp_path / "runs.db"
    shutil.copyfile(FIXTURES / "v1160002.db", path)
    with sqlite3.connect(path) as db:  # before it is opened (and migrated) by this version
        (config,) = db.execute("SELECT config FROM runs WHERE id = ?", (OLD_RUN,)).fetchone()
        db.execute(
            "UPDATE runs SET config = ? WHERE id = ?",
            (json.dumps({**json.loads(config), "pass_threshold": 0.8}), OLD_RUN),
        )
    db.close()
    store = Store(str(path))
    try:
        run(
            name="new",
            run_id="new-run",
            dataset=[{"id": "s1", "input": "q", "prediction": "p"}],
            scorers=[sixty],
            store=store,
            pass_threshold=0.8,
        )
    finally:
        store.close()
    return path


@pytest.fixture
async def client(store_path: Path, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(str(store_path), ServerSettings(dataset_roots=(tmp_path,)))
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            yield c
    finally:
        app.state.manager.shutdown()


#: (run, sample, the scorers below 0.8 that the reasons name)
CASES = [
    pytest.param("new-run", "s1", {"sixty"}, id="new-sample"),
    pytest.param(OLD_RUN, OLD_SAMPLE, {"exact_match", "llm_judge", "token_f1"}, id="old-row"),
]


def _below(reasons: list[dict[str, str]]) -> set[str]:
    """The scorers the reasons name as below the run's threshold of 0.8."""
    return {
        r["key"]
        for r in reasons
        if r["kind"] == "threshold" and r["text"].endswith("below the pass threshold 0.8")
    }


@pytest.mark.parametrize(("run_id", "sample_id", "below"), CASES)
def test_the_report_reads_the_runs_threshold(
    store_path: Path, run_id: str, sample_id: str, below: set[str]
) -> None:
    with Store(str(store_path)) as store:
        report = build_report(store, run_id).to_dict()
        sample = store.get_sample(run_id, sample_id)
    assert sample.verdict is not None and not sample.verdict.passed
    assert not example_numbers(sample).passed
    reasons = [
        {"kind": r["kind"], "key": r["key"], "text": r["reason"]} for r in report["failure_reasons"]
    ]
    assert _below(reasons) == below  # the run's samples below 0.8, as the sample's reasons
    assert report["pass_rate"]["passed"] == 0


@pytest.mark.parametrize(("run_id", "sample_id", "below"), CASES)
async def test_the_viewers_sample_detail_reads_the_runs_threshold(
    client: httpx.AsyncClient, run_id: str, sample_id: str, below: set[str]
) -> None:
    response = await client.get(f"/api/runs/{run_id}/samples/{sample_id}")
    assert response.status_code == 200, response.text
    detail = response.json()
    assert detail["passed"] is False and detail["verdict"]["passed"] is False
    assert _below(detail["verdict"]["reasons"]) == below
    page = (await client.get(f"/api/runs/{run_id}/samples", params={"limit": 100})).json()
    (row,) = [s for s in page["samples"] if s["id"] == sample_id]
    assert row["passed"] is False


@pytest.mark.parametrize(("run_id", "sample_id", "below"), CASES)
def test_telemetry_reads_the_runs_threshold(
    store_path: Path, run_id: str, sample_id: str, below: set[str]
) -> None:
    with Store(str(store_path)) as store:
        sample = store.get_sample(run_id, sample_id)
    attrs = sample_attributes(RunHeader(run_id, "r"), sample)
    assert attrs["aieval.passed"] is False
    assert sample.verdict is not None
    assert {r.key for r in sample.verdict.reasons if r.kind == "threshold"} == below


def test_a_config_without_a_threshold_reads_the_one_default(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    shutil.copyfile(FIXTURES / "v1160002.db", path)
    with sqlite3.connect(path) as db:
        (config,) = db.execute("SELECT config FROM runs WHERE id = ?", (OLD_RUN,)).fetchone()
        found = json.loads(config)
        found.pop("pass_threshold", None)
        db.execute("UPDATE runs SET config = ? WHERE id = ?", (json.dumps(found), OLD_RUN))
    db.close()
    with Store(str(path)) as store:
        assert SampleReader.pass_threshold(store, OLD_RUN) == DEFAULT_PASS_THRESHOLD
        verdict = store.get_sample(OLD_RUN, OLD_SAMPLE).verdict
    assert verdict is not None and not verdict.passed
    # at the default 0.5 only exact_match (0.0) is below: the judge's 0.6 and token_f1 are not
    assert {r.key for r in verdict.reasons if r.kind == "threshold"} == {"exact_match"}


def test_a_record_without_a_verdict_is_refused_by_every_reader() -> None:
    # built by hand, never graded: scored 0.6 with no pass flag, its run's threshold unknown
    record = SampleRecord("hand", 0, "q", scores={"sixty": ScoreRecord(0.6)})
    readers = [
        lambda: example_numbers(record),
        lambda: sample_attributes(RunHeader("r", "r"), record),
        lambda: sample_detail(record),
        lambda: sample_item(record),
    ]
    for read in readers:
        with pytest.raises(ConfigError, match="sample 'hand' has no verdict"):
            read()
