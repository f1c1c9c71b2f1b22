"""Kappa at its edges: undefined (one class missing on a side) is n/a and never certifies;
perfect agreement on few items keeps a lower bound below 1, and the decision rests on it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.server.test_review_api import judged_run
from tests.support.cli import Cli

from aieval import Store
from aieval.core import ReviewLabel
from aieval.judges import Certificate, agreement, certify, run_judges

J = "j"


def _labels(human: list[bool]) -> list[ReviewLabel]:
    return [ReviewLabel(J, "r", f"s{i}", "ana", passed=h) for i, h in enumerate(human)]


def _verdicts(judged: list[bool]) -> dict[tuple[str, str], bool]:
    return {("r", f"s{i}"): v for i, v in enumerate(judged)}


def test_perfect_agreement_on_112_items_has_a_lower_bound_below_one() -> None:
    human = [False] * 17 + [True] * 95
    result = agreement(_labels(human), _verdicts(human), judge=J)
    kappa = result.judge_human
    assert kappa.estimate == 1.0 and result.judge_human_undefined is None
    assert 0.6 < kappa.low < 0.97  # not the collapsed 1.000 (1.000 - 1.000)
    held = certify(_labels(human), _verdicts(human), judge=J, floor=0.6, min_labels=100)
    assert held.status == "certified" and held.certificate is not None
    assert held.certificate.bound == kappa.low
    strict = certify(
        _labels(human), _verdicts(human), judge=J, floor=round(kappa.low + 0.01, 3), min_labels=100
    )
    assert strict.status == "uncertified" and strict.certificate is None


def test_kappa_without_human_fail_labels_is_undefined_and_never_certifies() -> None:
    human = [True] * 150
    judged = [i % 10 != 0 for i in range(150)]
    result = agreement(_labels(human), _verdicts(judged), judge=J)
    assert result.judge_human_undefined == "no human-fail labels"
    assert result.to_dict()["judge_human_kappa"] is None
    decided = certify(_labels(human), _verdicts(judged), judge=J, floor=-0.5, min_labels=0)
    assert decided.status == "uncertified" and decided.certificate is None
    assert "kappa n/a" in decided.reason and "no human-fail labels" in decided.reason
    # a certified judge whose newer labels leave no human-fail: drifting, not certified
    cert = Certificate(J, 150, 0.9, 0.8, 0.6, certified_at=10.0)
    newer = [ReviewLabel(J, "r", f"s{i}", "ana", passed=True, labelled_at=20.0) for i in range(150)]
    drift = certify(newer, _verdicts(judged), judge=J, certificate=cert, min_labels=0)
    assert drift.status == "drifting" and "can no longer be measured" in drift.reason
    # a judge that passes everything: no judge-fail
    mixed = [i % 4 != 0 for i in range(150)]
    agree_all = agreement(_labels(mixed), _verdicts([True] * 150), judge=J)
    assert agree_all.judge_human_undefined == "the judge passed every labelled item (no judge-fail)"


def test_the_cli_prints_na_with_the_reason(tmp_path: Path, in_process: Cli) -> None:
    db = str(tmp_path / "runs.db")
    with Store(db) as store:
        run_id = judged_run(store)
        [(key, _)] = run_judges(store.get_run(run_id).config)
        store.add_review_labels(
            ReviewLabel(key.digest, run_id, f"s{i}", "ann", passed=True, labelled_at=1.7e9)
            for i in range(6)
        )
    done = in_process("judges", "judged", "--db", db, "--min-labels", "0", env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "n/a (no human-fail labels)" in done.stdout and "0.000 (0.000" not in done.stdout
    assert "uncertified:" in done.stdout
    as_json = in_process("judges", "judged", "--db", db, "--min-labels", "0", "--json")
    cert = json.loads(as_json.stdout)[0]["certification"]
    assert cert["status"] == "uncertified" and cert["agreement"]["judge_human_kappa"] is None
