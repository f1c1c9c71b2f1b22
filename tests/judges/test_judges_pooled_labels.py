"""``aieval judges RUN`` says how many labels it pooled from other stored runs of the judge,
apart from labels on samples no run of the judge graded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.report.test_judge_figures import KEY, _labels, _write
from tests.support.cli import run_main

from aieval.core import ReviewLabel
from aieval.store import Store


def test_labels_on_another_run_of_the_judge_are_called_pooled_not_ungraded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    with Store(db) as store:
        _write(store, "base")
        _write(store, "cand")
        pooled = _labels("base")  # 90 labels, all on the other run
        stray = [ReviewLabel(KEY.digest, "gone", "ex1", "ana", passed=True)]
        store.add_review_labels([*pooled, *_labels("cand")[:10]])
    # a label on a run the store lacks comes only from a file
    labels = tmp_path / "labels.jsonl"
    with Store(db) as store:
        rows = [*store.review_labels(judge=KEY.digest), *stray]
    labels.write_text(
        "".join(
            json.dumps({"judge": r.judge, "run_id": r.run_id, "sample_id": r.sample_id,
                        "reviewer": r.reviewer, "passed": r.passed}) + "\n"
            for r in rows
        )
    )  # fmt: skip
    text = run_main(capsys, monkeypatch, "judges", "cand", "--db", str(db),
                    "--labels", str(labels), env={"COLUMNS": "200"})  # fmt: skip
    assert text.returncode == 0, text.stderr
    assert (
        f"100 label(s) by 2 reviewer(s), {len(pooled)} of them on other stored runs" in text.stdout
    )
    assert "1 label(s) on samples no stored run of the judge graded" in text.stdout
    done = run_main(capsys, monkeypatch, "judges", "cand", "--db", str(db), "--json")
    [judge] = json.loads(done.stdout)
    assert judge["pooled_labels"] == len(pooled)
    assert judge["certification"]["agreement"]["unmatched"] == 0
