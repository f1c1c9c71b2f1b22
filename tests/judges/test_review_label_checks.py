"""Labels from a file are checked as the API checks them: each field once, either passed or a
score, a printable reviewer, a sane time (a missing one is the import's), a judge the store has;
``aieval judges`` reads the store's labels when no file is given."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from tests.server.test_review_api import judged_run
from tests.support.cli import Cli

from aieval import Store
from aieval.core import ReviewLabel
from aieval.errors import ReviewError
from aieval.judges import read_review_labels, run_judges

NOW = 1_700_000_000.0


def _good(**extra: object) -> dict[str, object]:
    row: dict[str, object] = {"judge": "j", "run_id": "r", "sample_id": "s", "reviewer": "ann",
                              "passed": True, "labelled_at": NOW - 10}  # fmt: skip
    return {**row, **extra}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"judge": "j", "run_id": "r", "sample_id": "s", "reviewer": "ann", "passed": true,'
            ' "passed": false}',
            "line 1: field 'passed' is given twice",
        ),
        (json.dumps(_good(score=0.9)), "line 1: fields 'passed' and 'score' are both set"),
        (json.dumps(_good(reviewer="ann\x00")), "line 1: field 'reviewer' must be printable"),
        (json.dumps(_good(reviewer="ann\x1b[31m")), "line 1: field 'reviewer' must be printable"),
        (json.dumps(_good(reviewer="a" * 201)), "line 1: field 'reviewer' must be printable"),
        (json.dumps(_good(labelled_at=-1e300)), "line 1: field 'labelled_at' must be a time"),
        (json.dumps(_good(labelled_at=1e300)), "line 1: field 'labelled_at' must be a time"),
        (json.dumps(_good(labelled_at=946_684_799)), "line 1: field 'labelled_at' must be"),
        (json.dumps(_good(labelled_at=NOW + 3600)), "line 1: field 'labelled_at' must be"),
        (json.dumps(_good(labelled_at=0)), "line 1: field 'labelled_at' must be a time"),
    ],
)
def test_a_line_the_api_would_refuse_is_refused_naming_line_and_field(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(ReviewError) as caught:
        read_review_labels(path, now=NOW)
    assert message in str(caught.value)


def test_a_label_without_a_time_takes_the_imports_time(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    row = _good()
    del row["labelled_at"]
    path.write_text(json.dumps(row) + "\n" + json.dumps(_good(labelled_at=NOW + 60)) + "\n")
    first, second = read_review_labels(path, now=NOW)
    assert first.labelled_at == NOW and second.labelled_at == NOW + 60  # within the skew
    path.write_text(json.dumps(row) + "\n")
    before = time.time()
    [clocked] = read_review_labels(path)  # the clock's time when none is given
    assert before <= clocked.labelled_at <= time.time()


def test_import_refuses_a_judge_the_store_does_not_have(tmp_path: Path, in_process: Cli) -> None:
    db = str(tmp_path / "runs.db")
    with Store(db) as store:
        run_id = judged_run(store)
        [(key, _)] = run_judges(store.get_run(run_id).config)
    path = tmp_path / "labels.jsonl"
    rows = [
        {"judge": key.digest, "run_id": run_id, "sample_id": "s0", "reviewer": "ann",
         "passed": True},
        {"judge": "feedfacefeedface", "run_id": run_id, "sample_id": "s1", "reviewer": "ann",
         "passed": True},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    done = in_process("review", "import", str(path), "--db", db)
    assert done.returncode != 0 and "feedfacefeedface" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    with Store(db) as store:
        assert store.review_labels() == []  # nothing stored
    path.write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    done = in_process("review", "import", str(path), "--db", db)
    assert done.returncode == 0 and "1 new labels stored" in done.stdout, done.stderr


def test_judges_reads_the_stores_labels_by_default(tmp_path: Path, in_process: Cli) -> None:
    db = str(tmp_path / "runs.db")
    with Store(db) as store:
        run_id = judged_run(store)
        [(key, threshold)] = run_judges(store.get_run(run_id).config)
        scores = {s.id: s.scores["helpful"].value for s in store.iter_samples(run_id)}
        store.add_review_labels(
            ReviewLabel(key.digest, run_id, sid, "ann", passed=(v or 0) >= threshold,
                        labelled_at=NOW)
            for sid, v in scores.items()
        )  # fmt: skip
    done = in_process("judges", "judged", "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    [payload] = json.loads(done.stdout)
    agree = payload["certification"]["agreement"]
    assert agree["items"] == len(scores) and agree["labels"] == len(scores)
    other = tmp_path / "other.jsonl"
    other.write_text(
        json.dumps({"judge": key.digest, "run_id": run_id, "sample_id": "s0", "reviewer": "bo",
                    "passed": True, "labelled_at": NOW}) + "\n"
    )  # fmt: skip
    given = in_process("judges", "judged", "--db", db, "--json", "--labels", str(other))
    assert given.returncode == 0, given.stderr
    assert json.loads(given.stdout)[0]["certification"]["agreement"]["labels"] == 1
