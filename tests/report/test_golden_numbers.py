"""Reports and comparisons of a fixture store match the golden JSON to the last digit.

``tests/report/golden/fixture.py`` builds the store (judges, gates, criteria with floors,
target errors, unscored and n/a samples, rows' own checks, workflow verdicts, epochs) and wrote
``golden/reports.json`` with the code of the time; whatever reads samples back must keep it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.report.golden.fixture import build_store, documents, golden_path


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(golden_path().read_text(encoding="utf-8"))
    return data


def test_reports_and_comparisons_match_golden(store_location: str, golden: dict[str, Any]) -> None:
    store = build_store(store_location)
    try:
        # through JSON, as the golden file holds them (tuples become lists)
        got = json.loads(json.dumps(documents(store), sort_keys=True, allow_nan=False))
    finally:
        store.close()
    assert sorted(got) == sorted(golden)
    for key, want in golden.items():
        assert got[key] == want, key
