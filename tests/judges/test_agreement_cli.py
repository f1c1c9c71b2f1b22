"""``aieval judges``: agreement, status and raw vs corrected pass rate of a stored run's judge."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.judges.helpers import provider_for, user_text
from tests.support.cli import run_main
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.oracles import cohen_kappa_score

from aieval import Store, run
from aieval.core import JudgeKey
from aieval.judges import run_judges
from aieval.scorers import llm_judge

_GRADE = re.compile(r"grade (\d+)")
# 40 samples: the judge grades 8 (pass) or 2 (fail); the humans disagree on a few.
JUDGE = [8 if i % 5 in (0, 1, 2) else 2 for i in range(40)]
HUMAN = [(g >= 5) != (i % 8 == 0) for i, g in enumerate(JUDGE)]


def scripted(body: Any) -> Reply:
    found = _GRADE.search(user_text(body))
    return Reply(json.dumps({"score": int(found.group(1)) if found else 0, "reason": "r"}))


def _judged_run(openai_server: OpenAIServer, db: Path) -> tuple[str, JudgeKey, float]:
    """A run ``cal`` of the scripted judge over JUDGE's grades: its id, judge key, threshold."""
    openai_server.responder = scripted
    judge = llm_judge("Be right.", provider=provider_for(openai_server), model="judge-v1")
    rows = [{"id": f"s{i}", "prompt": "q", "prediction": f"grade {g}"} for i, g in enumerate(JUDGE)]
    run_id = run(name="cal", dataset=rows, scorers=[judge], store=db).id
    with Store(db) as store:
        [(key, threshold)] = run_judges(store.get_run(run_id).config)
    return run_id, key, threshold


def test_judges_prints_agreement_status_and_corrected_rate(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = tmp_path / "runs.db"
    run_id, key, threshold = _judged_run(openai_server, db)
    labels = tmp_path / "labels.jsonl"
    lines = [
        {"judge": key.digest, "run_id": run_id, "sample_id": f"s{i}", "reviewer": "ana",
         "passed": h}
        for i, h in enumerate(HUMAN)
    ]  # fmt: skip
    lines.append({**lines[0], "judge": "0000000000000000"})  # another judge's label
    labels.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")

    args = ["judges", "cal", "--labels", str(labels), "--db", str(db)]
    done = run_main(capsys, monkeypatch, *args, "--json")
    assert done.returncode == 0, done.stderr
    [payload] = json.loads(done.stdout)
    assert payload["digest"] == key.digest and payload["judge"] == "llm_judge@judge-v1"
    cert = payload["certification"]
    agree = cert["agreement"]
    judged = [g / 10 >= threshold for g in JUDGE]
    assert agree["judge_human_kappa"]["estimate"] == pytest.approx(cohen_kappa_score(HUMAN, judged))
    assert agree["items"] == 40 and agree["base_rate"] == pytest.approx(sum(HUMAN) / 40)
    assert cert["status"] == "uncertified" and cert["labels_needed"] >= 60
    [rate] = payload["runs"]
    assert rate["raw"] == pytest.approx(sum(judged) / 40)
    tpr, tnr = agree["true_pos"] / agree["positives"], agree["true_neg"] / agree["negatives"]
    expected = (rate["raw"] + tnr - 1) / (tpr + tnr - 1)
    assert rate["corrected"]["corrected"] == pytest.approx(min(1.0, max(0.0, expected)))

    text = run_main(capsys, monkeypatch, *args)
    assert text.returncode == 0, text.stderr
    for part in ("kappa judge-human", "TPR", "TNR", "base rate", "uncertified:", "corrected"):
        assert part in text.stdout
    other = run_main(capsys, monkeypatch, *args, "--scorer", "nope")
    assert other.returncode == 2 and "have no judge named 'nope'" in other.stderr


def test_judges_stores_a_certificate_and_reports_drift_from_newer_labels(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = tmp_path / "runs.db"
    run_id, key, threshold = _judged_run(openai_server, db)
    agreeing = [
        {"judge": key.digest, "run_id": run_id, "sample_id": f"s{i}", "reviewer": "ana",
         "passed": g / 10 >= threshold, "labelled_at": 1_700_000_000.0}
        for i, g in enumerate(JUDGE)
    ]  # fmt: skip
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(x) + "\n" for x in agreeing), encoding="utf-8")
    args = ["judges", "cal", "--labels", str(labels), "--db", str(db), "--min-labels", "30"]
    first = run_main(capsys, monkeypatch, *args, "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)[0]["certification"]["status"] == "certified"
    with Store(db) as store:
        [cert] = store.certificates(key.digest)
    assert cert.n == 40 and cert.bound >= 0.6 and cert.label == "llm_judge@judge-v1"

    # Two later reviewers overrule the first on half the items: the bound falls below 0.6.
    newer = [
        {**row, "reviewer": who, "passed": not row["passed"], "labelled_at": cert.certified_at + 1}
        for row in agreeing[::2]
        for who in ("bo", "cy")
    ]
    labels.write_text("".join(json.dumps(x) + "\n" for x in agreeing + newer), encoding="utf-8")
    again = run_main(capsys, monkeypatch, *args, "--json")
    assert again.returncode == 0, again.stderr
    status = json.loads(again.stdout)[0]["certification"]
    assert status["status"] == "drifting" and status["newer"] == len(newer)
    assert status["certificate"]["certified_at"] == cert.certified_at
    with Store(db) as store:
        assert len(store.certificates(key.digest)) == 1  # no new certificate while drifting
