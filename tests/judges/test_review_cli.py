"""``aieval review``: create, status, export and import (JSONL checked by line, idempotent)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.server.test_review_api import judged_run
from tests.support.cli import Cli

from aieval import Store
from aieval.core import ReviewLabel
from aieval.judges import read_review_labels


def test_a_queue_is_made_labelled_exported_and_imported_again(
    tmp_path: Path, in_process: Cli
) -> None:
    db = str(tmp_path / "runs.db")
    with Store(db) as store:
        run_id = judged_run(store)
    made = in_process("review", "create", "judged", "--scorer", "helpful", "--size", "4",
                      "--name", "week1", "--db", db)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "4 items x 2 reviewers" in made.stdout
    with Store(db) as store:
        queue = store.review_queue("week1")
        for reviewer in ("ann", "bob"):
            item = store.reserve_review_item(queue.id, reviewer)
            assert item is not None
            store.save_review_label(
                queue.id, item.ord,
                ReviewLabel(queue.judge.digest, run_id, item.sample_id, reviewer, passed=True,
                            note='a "quoted" note\n', labelled_at=1_700_000_000.0),
            )  # fmt: skip
    status = in_process("review", "status", "--db", db, env={"COLUMNS": "200"})
    assert status.returncode == 0 and "week1" in status.stdout and "ann 1, bob 1" in status.stdout
    exported = tmp_path / "labels.jsonl"
    done = in_process("review", "export", "week1", "-o", str(exported), "--db", db)
    assert done.returncode == 0 and "2 labels" in done.stdout
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert {line["reviewer"] for line in lines} == {"ann", "bob"}
    assert lines[0]["note"] == 'a "quoted" note\n' and lines[0]["judge"] == queue.judge.digest
    # into a new store holding the run: stored once, however often imported
    other = str(tmp_path / "other.db")
    with Store(other) as store:
        other_run = judged_run(store)
    lines_of_other = [dict(line, run_id=other_run) for line in lines]
    moved = tmp_path / "moved.jsonl"
    moved.write_text("".join(json.dumps(line) + "\n" for line in lines_of_other))
    first = in_process("review", "import", str(moved), "--db", other)
    assert first.returncode == 0 and "2 new labels stored, 0 already there" in first.stdout
    second = in_process("review", "import", str(moved), "--db", other)
    assert "0 new labels stored, 2 already there" in second.stdout
    with Store(other) as store:
        assert len(store.review_labels(judge=queue.judge.digest)) == 2
    # a label of a sample the store does not hold is refused, naming it; nothing is stored
    refused = in_process("review", "import", str(exported), "--db", other)
    assert refused.returncode != 0 and f"{run_id}/" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_bad_line_is_refused_with_its_number(tmp_path: Path, in_process: Cli) -> None:
    good = {"judge": "j", "run_id": "r", "sample_id": "s", "reviewer": "ann", "passed": True}
    cases = {
        "not json": "line 2: not JSON",
        json.dumps(dict(good, passed="yes")): "line 2: field 'passed' must be true",
        json.dumps(
            dict(good, passed=None, score=2)
        ): "line 2: the label of sample 's' by 'ann' has score 2",
        json.dumps(dict(good, note="x" * 4001)): "line 2: field 'note' must be a text",
        json.dumps(dict(good, url="http://x")): "line 2: unknown field(s) 'url'",
        json.dumps(dict(good, reviewer="")): "line 2: field 'reviewer' must be a text",
        json.dumps([1]): "line 2: a label is a JSON object",
    }
    path = tmp_path / "labels.jsonl"
    for line, message in cases.items():
        path.write_text(json.dumps(good) + "\n" + line + "\n")
        done = in_process("review", "import", str(path), "--db", str(tmp_path / "x.db"))
        assert done.returncode != 0 and message in done.stderr, (line, done.stderr)
        assert "Traceback" not in done.stderr
    path.write_text(json.dumps(good) + "\n\n")
    # a line without a time takes the read's time
    assert read_review_labels(path, now=1e9) == [
        ReviewLabel("j", "r", "s", "ann", passed=True, labelled_at=1e9)
    ]
