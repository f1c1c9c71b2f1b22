"""Renderers and schemas on real ``to_dict()`` output of reports and comparisons of stored runs."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from tests.support.reports import HOSTILE_ID, record_runs

from aieval.report import (
    build_report,
    compare_runs,
    comparison_schema,
    render_html,
    render_json,
    render_markdown,
    render_text,
    report_schema,
)
from aieval.store import Store


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, dict[str, str]]:
    db = tmp_path_factory.mktemp("stored") / "runs.db"
    ids = record_runs(db)
    return Store(db), ids


def _documents(store: Store, ids: dict[str, str]) -> dict[str, dict[str, Any]]:
    return {
        "ungraded": build_report(store, ids["v2"], slice_by=["topic"], n_resamples=200).to_dict(),
        "graded": build_report(store, ids["graded"], n_resamples=200).to_dict(),
        "promote": compare_runs(store, ids["v1"], ids["v2"], n_resamples=200).to_dict(),
        "block": compare_runs(store, ids["v2"], ids["v1"], n_resamples=200).to_dict(),
    }


def test_real_documents_validate_against_the_published_schemas(
    stored: tuple[Store, dict[str, str]],
) -> None:
    docs = _documents(*stored)
    assert docs["promote"]["decision"]["promote"] is True
    assert docs["block"]["decision"]["promote"] is False
    assert docs["graded"]["graded"] is True and docs["ungraded"]["graded"] is False
    for doc in docs.values():
        schema = report_schema() if doc["kind"] == "report" else comparison_schema()
        jsonschema.Draft202012Validator(schema).validate(json.loads(render_json(doc)))


def test_every_renderer_accepts_the_objects_and_their_dicts(
    stored: tuple[Store, dict[str, str]],
) -> None:
    store, ids = stored
    report = build_report(store, ids["v1"], n_resamples=200)
    comparison = compare_runs(store, ids["v1"], ids["v2"], n_resamples=200)
    for obj in (report, comparison):
        for render in (render_text, render_json, render_markdown, render_html):
            assert render(obj) == render(obj.to_dict())


def test_hostile_sample_id_from_a_real_run_is_escaped(
    stored: tuple[Store, dict[str, str]],
) -> None:
    store, ids = stored
    comparison = compare_runs(store, ids["v1"], ids["v2"], n_resamples=200).to_dict()
    assert HOSTILE_ID in {r["id"] for r in comparison["improvements"]}
    page = render_html(comparison)
    assert HOSTILE_ID not in page and "&lt;script&gt;" in page
    assert HOSTILE_ID not in render_markdown(comparison)
